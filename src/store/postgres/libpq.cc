#include "store/postgres/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace abacus {
namespace {

constexpr char kSoname[] = "libpq.so.5";

const LibPq* loaded = nullptr;

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn& out, std::string* missing) {
  out = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (out == nullptr && missing->empty()) *missing = name;
  return out != nullptr;
}

}  // namespace

Result<const LibPq*> LoadLibPqFrom(const char* soname) {
  void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return FailedPrecondition(std::string("a PostgreSQL store needs the client library ") + soname +
                              " (Debian package libpq5), which could not be loaded: " + (why ? why : "unknown error"));
  }
  auto* pq = new LibPq{};  // lives as long as the process: connections may outlive any owner
  std::string missing;
  Resolve(lib, "PQconnectdb", pq->connectdb, &missing);
  Resolve(lib, "PQstatus", pq->status, &missing);
  Resolve(lib, "PQerrorMessage", pq->errorMessage, &missing);
  Resolve(lib, "PQfinish", pq->finish, &missing);
  Resolve(lib, "PQreset", pq->reset, &missing);
  Resolve(lib, "PQsetNoticeProcessor", pq->setNoticeProcessor, &missing);
  Resolve(lib, "PQtransactionStatus", pq->transactionStatus, &missing);
  Resolve(lib, "PQhost", pq->host, &missing);
  Resolve(lib, "PQport", pq->port, &missing);
  Resolve(lib, "PQuser", pq->user, &missing);
  Resolve(lib, "PQdb", pq->db, &missing);
  Resolve(lib, "PQexec", pq->exec, &missing);
  Resolve(lib, "PQprepare", pq->prepare, &missing);
  Resolve(lib, "PQexecPrepared", pq->execPrepared, &missing);
  Resolve(lib, "PQsendQueryPrepared", pq->sendQueryPrepared, &missing);
  Resolve(lib, "PQsendQueryParams", pq->sendQueryParams, &missing);
  Resolve(lib, "PQenterPipelineMode", pq->enterPipelineMode, &missing);
  Resolve(lib, "PQexitPipelineMode", pq->exitPipelineMode, &missing);
  Resolve(lib, "PQpipelineSync", pq->pipelineSync, &missing);
  Resolve(lib, "PQgetResult", pq->getResult, &missing);
  Resolve(lib, "PQresultStatus", pq->resultStatus, &missing);
  Resolve(lib, "PQresultErrorMessage", pq->resultErrorMessage, &missing);
  Resolve(lib, "PQresultErrorField", pq->resultErrorField, &missing);
  Resolve(lib, "PQntuples", pq->ntuples, &missing);
  Resolve(lib, "PQcmdTuples", pq->cmdTuples, &missing);
  Resolve(lib, "PQgetvalue", pq->getvalue, &missing);
  Resolve(lib, "PQgetlength", pq->getlength, &missing);
  Resolve(lib, "PQclear", pq->clear, &missing);
  if (!missing.empty()) {
    delete pq;
    ::dlclose(lib);
    // Pipeline mode came with libpq 14.
    return FailedPrecondition(std::string(soname) + " lacks " + missing + ": a PostgreSQL store needs libpq 14 or later");
  }
  return pq;
}

Result<const LibPq*> LoadLibPq() {
  static std::once_flag once;
  static Status failure;
  std::call_once(once, [] {
    auto r = LoadLibPqFrom(kSoname);
    if (r.ok()) {
      loaded = *r;
    } else {
      failure = r.status();
    }
  });
  if (loaded == nullptr) return failure;
  return loaded;
}

const LibPq& Pq() { return *loaded; }

}  // namespace abacus
