// WaymarkAggregator: see README.md "Architecture". Work in progress.
enum WaymarkAggregatorModule {}
