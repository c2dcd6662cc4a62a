// Not implemented yet (issue 6): the aggregator's ingest, fusion and PostgreSQL writes are still to come.
import Foundation
FileHandle.standardError.write(Data("""
waymark-aggregator: not implemented yet — the aggregator (MQTT → fusion → PostgreSQL) is tracked in issue 6.
usage: waymark-aggregator --site SITE.yaml --broker mqtt://HOST:PORT --database postgresql://…

""".utf8))
exit(2)
