// libpq: the PostgreSQL client library used by the aggregator and the reports.
#ifndef WAYMARK_CLIBPQ_SHIM_H
#define WAYMARK_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
