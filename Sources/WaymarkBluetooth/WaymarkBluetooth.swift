// WaymarkBluetooth: see README.md "Architecture". Work in progress.
enum WaymarkBluetoothModule {}
