// Not implemented yet (issue 5): the edge agent's scanning, spool and publishing are still to come.
import Foundation
FileHandle.standardError.write(Data("""
waymark-edge: not implemented yet — the edge agent (BLE scan → MQTT) is tracked in issue 5.
usage: waymark-edge --site SITE.yaml --gateway ID [--source hci0|replay:FILE] [--broker mqtt://HOST:PORT]

""".utf8))
exit(2)
