#include "server/error_detail.h"

#include "common/log.h"
#include "store/storage_full.h"

namespace abacus::server {

Status ForCaller(const Status& st, const govern::Principal& who) {
  if (!IsStorageFull(st)) return st;
  ABACUS_LOG_ERROR("storage full (answered {}): {}", who.ToString(), st.message());
  if (who.HasRole(Role::kAdmin)) return st;
  return Unavailable(
      "the server's storage is full: nothing was stored; an administrator must free space before this can "
      "succeed (the server log has the detail)");
}

}  // namespace abacus::server
