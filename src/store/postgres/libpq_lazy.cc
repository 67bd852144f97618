// libpq, loaded on first use (issue 23, "A CLI that starts fast"): the binary does not link
// libpq.so.5, whose dependencies (Kerberos, LDAP, SASL, GnuTLS and theirs, about 20 libraries)
// the dynamic loader would otherwise map and relocate for every command, `abacus --version`
// included. Each libpq function the store calls is defined here and forwards to the function of
// the library, opened with dlopen the first time a PostgreSQL store needs it. Without libpq on
// the machine a connection fails with an error that says so (PQerrorMessage); nothing else
// changes. Built when ABACUS_LAZY_LIBPQ is on (CMakeLists.txt); off, libpq is linked as before.
#if ABACUS_LAZY_LIBPQ

#include <dlfcn.h>
#include <libpq-fe.h>

#include <mutex>
#include <string>

namespace {

// The library's handle, or null with the reason in Problem().
void* Library() {
  static void* handle = [] {
    void* h = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    return h;
  }();
  return handle;
}

const std::string& Problem() {
  static const std::string problem = [] {
    if (Library() != nullptr) return std::string();
    const char* why = ::dlerror();
    return std::string("cannot load libpq.so.5 (") + (why != nullptr ? why : "not found") +
           "): a postgres:// store needs the PostgreSQL client library; install libpq5\n";
  }();
  return problem;
}

template <typename F>
F Symbol(const char* name) {
  void* h = Library();
  return h == nullptr ? nullptr : reinterpret_cast<F>(::dlsym(h, name));
}

}  // namespace

// One forwarder per function: FALLBACK is what it answers without the library.
#define ABACUS_PQ_FORWARD(RET, NAME, PARAMS, ARGS, FALLBACK)              \
  extern "C" RET NAME PARAMS {                                             \
    static const auto fn = Symbol<decltype(&::NAME)>(#NAME);               \
    if (fn == nullptr) return FALLBACK;                                    \
    return fn ARGS;                                                        \
  }

ABACUS_PQ_FORWARD(PGconn*, PQconnectdb, (const char* conninfo), (conninfo), nullptr)
ABACUS_PQ_FORWARD(ConnStatusType, PQstatus, (const PGconn* c), (c), CONNECTION_BAD)
ABACUS_PQ_FORWARD(PGTransactionStatusType, PQtransactionStatus, (const PGconn* c), (c), PQTRANS_UNKNOWN)
ABACUS_PQ_FORWARD(char*, PQerrorMessage, (const PGconn* c), (c), const_cast<char*>(Problem().c_str()))
ABACUS_PQ_FORWARD(char*, PQuser, (const PGconn* c), (c), nullptr)
ABACUS_PQ_FORWARD(char*, PQport, (const PGconn* c), (c), nullptr)
ABACUS_PQ_FORWARD(char*, PQhost, (const PGconn* c), (c), nullptr)
ABACUS_PQ_FORWARD(char*, PQdb, (const PGconn* c), (c), nullptr)
ABACUS_PQ_FORWARD(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn * c, PQnoticeProcessor proc, void* arg),
                  (c, proc, arg), nullptr)
ABACUS_PQ_FORWARD(PGresult*, PQexec, (PGconn * c, const char* query), (c, query), nullptr)
ABACUS_PQ_FORWARD(PGresult*, PQprepare,
                  (PGconn * c, const char* name, const char* query, int n, const Oid* types), (c, name, query, n, types),
                  nullptr)
ABACUS_PQ_FORWARD(PGresult*, PQexecPrepared,
                  (PGconn * c, const char* name, int n, const char* const* values, const int* lengths,
                   const int* formats, int result_format),
                  (c, name, n, values, lengths, formats, result_format), nullptr)
ABACUS_PQ_FORWARD(int, PQsendQueryParams,
                  (PGconn * c, const char* command, int n, const Oid* types, const char* const* values,
                   const int* lengths, const int* formats, int result_format),
                  (c, command, n, types, values, lengths, formats, result_format), 0)
ABACUS_PQ_FORWARD(int, PQsendQueryPrepared,
                  (PGconn * c, const char* name, int n, const char* const* values, const int* lengths,
                   const int* formats, int result_format),
                  (c, name, n, values, lengths, formats, result_format), 0)
ABACUS_PQ_FORWARD(PGresult*, PQgetResult, (PGconn * c), (c), nullptr)
ABACUS_PQ_FORWARD(int, PQenterPipelineMode, (PGconn * c), (c), 0)
ABACUS_PQ_FORWARD(int, PQexitPipelineMode, (PGconn * c), (c), 0)
ABACUS_PQ_FORWARD(int, PQpipelineSync, (PGconn * c), (c), 0)
ABACUS_PQ_FORWARD(ExecStatusType, PQresultStatus, (const PGresult* r), (r), PGRES_FATAL_ERROR)
ABACUS_PQ_FORWARD(char*, PQresultErrorMessage, (const PGresult* r), (r), const_cast<char*>(Problem().c_str()))
ABACUS_PQ_FORWARD(char*, PQresultErrorField, (const PGresult* r, int field), (r, field), nullptr)
ABACUS_PQ_FORWARD(int, PQntuples, (const PGresult* r), (r), 0)
ABACUS_PQ_FORWARD(char*, PQgetvalue, (const PGresult* r, int row, int col), (r, row, col), nullptr)
ABACUS_PQ_FORWARD(int, PQgetlength, (const PGresult* r, int row, int col), (r, row, col), 0)
ABACUS_PQ_FORWARD(char*, PQcmdTuples, (PGresult * r), (r), nullptr)

extern "C" void PQclear(PGresult* r) {
  static const auto fn = Symbol<decltype(&::PQclear)>("PQclear");
  if (fn != nullptr) fn(r);
}
extern "C" void PQfinish(PGconn* c) {
  static const auto fn = Symbol<decltype(&::PQfinish)>("PQfinish");
  if (fn != nullptr) fn(c);
}
extern "C" void PQreset(PGconn* c) {
  static const auto fn = Symbol<decltype(&::PQreset)>("PQreset");
  if (fn != nullptr) fn(c);
}

#endif  // ABACUS_LAZY_LIBPQ
