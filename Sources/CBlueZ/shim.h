// BlueZ's libbluetooth: HCI sockets, LE scan commands, event filters.
#ifndef WAYMARK_CBLUEZ_SHIM_H
#define WAYMARK_CBLUEZ_SHIM_H
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
