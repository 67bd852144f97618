// A store that has no space left (a full disk, SQLite's max_page_count, PostgreSQL SQLSTATE
// 53100) fails its writes with one recognisable Status: Unavailable (HTTP 503: nothing was
// stored; retrying helps only once space is freed), never ResourceExhausted ("retry", 429). Its
// message carries the store's detail (the database path), which the API shows to admins only
// (server/error_detail.h).
#pragma once

#include <string>

#include "common/status.h"

namespace abacus {

// Returns the status of a write refused for lack of space; `detail` names the store and why.
Status StorageFullError(std::string detail);

// Returns whether `st` is a StorageFullError.
bool IsStorageFull(const Status& st);

}  // namespace abacus
