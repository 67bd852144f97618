// libpq, loaded when the first PostgreSQL connection opens (dlopen), not at every start: libpq
// pulls in about twenty libraries (GSSAPI, Kerberos, LDAP, SASL, GnuTLS...) whose mapping and
// relocation cost each `abacus` verb ~12 ms of CPU, though only a server on a postgres:// store
// (and `abacus admin migrate`) ever talks to PostgreSQL (issue 23, "A CLI that starts fast").
//
//   if (auto loaded = LoadLibPq(); !loaded.ok()) return loaded.status();
//   pg_conn* c = Pq().connectdb("...");
#pragma once

#include <libpq-fe.h>

#include "common/status.h"

namespace abacus {

// The libpq functions the store calls, resolved from the loaded library.
struct LibPq {
  decltype(&::PQconnectdb) connectdb;
  decltype(&::PQstatus) status;
  decltype(&::PQerrorMessage) errorMessage;
  decltype(&::PQfinish) finish;
  decltype(&::PQreset) reset;
  decltype(&::PQsetNoticeProcessor) setNoticeProcessor;
  decltype(&::PQtransactionStatus) transactionStatus;
  decltype(&::PQhost) host;
  decltype(&::PQport) port;
  decltype(&::PQuser) user;
  decltype(&::PQdb) db;
  decltype(&::PQexec) exec;
  decltype(&::PQprepare) prepare;
  decltype(&::PQexecPrepared) execPrepared;
  decltype(&::PQsendQueryPrepared) sendQueryPrepared;
  decltype(&::PQsendQueryParams) sendQueryParams;
  decltype(&::PQenterPipelineMode) enterPipelineMode;
  decltype(&::PQexitPipelineMode) exitPipelineMode;
  decltype(&::PQpipelineSync) pipelineSync;
  decltype(&::PQgetResult) getResult;
  decltype(&::PQresultStatus) resultStatus;
  decltype(&::PQresultErrorMessage) resultErrorMessage;
  decltype(&::PQresultErrorField) resultErrorField;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQcmdTuples) cmdTuples;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQclear) clear;
};

// Loads libpq.so.5 once (thread-safe) and resolves every function above. The error names the
// library, what the loader said and the Debian package that provides it.
Result<const LibPq*> LoadLibPq();
// Loads `soname` instead (tests): a new, separate attempt each call.
Result<const LibPq*> LoadLibPqFrom(const char* soname);
// The loaded functions. Only after LoadLibPq succeeded (every connection and result implies it).
const LibPq& Pq();

}  // namespace abacus
