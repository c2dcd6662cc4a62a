// WaymarkMQTT: see README.md "Architecture". Work in progress.
enum WaymarkMQTTModule {}
