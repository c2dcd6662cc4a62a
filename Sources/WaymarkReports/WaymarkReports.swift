// WaymarkReports: see README.md "Architecture". Work in progress.
enum WaymarkReportsModule {}
