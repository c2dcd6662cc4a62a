// WaymarkPostgres: see README.md "Architecture". Work in progress.
enum WaymarkPostgresModule {}
