// What an error answer may tell the caller of the current request. Store errors name internal
// paths and hosts (the SQLite file, the PostgreSQL server): an admin gets them whole; anyone else
// gets what happened and what to do, and the server log keeps the detail.
#pragma once

#include "common/status.h"
#include "govern/identity.h"

namespace abacus::server {

// Returns `st` as `who`, the caller of a request, may see it: a full store
// (store/storage_full.h) for a caller without the admin role becomes "the server's storage is
// full …" without the store's detail (logged here); anything else is returned as it is.
Status ForCaller(const Status& st, const govern::Principal& who);

}  // namespace abacus::server
