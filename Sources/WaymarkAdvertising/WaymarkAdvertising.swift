// WaymarkAdvertising: see README.md "Architecture". Work in progress.
enum WaymarkAdvertisingModule {}
