// Migration: one numbered step of a backend's schema. Versions start at 1 and increase by 1;
// every backend ships the same versions with the same logical tables, in its own SQL dialect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"

namespace abacus {

struct Migration {
  int version = 0;
  std::string_view name;  // "initial", "journal_time_index", ...
  std::string_view sql;   // one or more statements, run in one transaction
};

// Returns OK when `migrations` are numbered 1, 2, 3, … in order; Internal naming the first gap.
Status CheckMigrations(std::span<const Migration> migrations);

// Returns a read's row limit for SQL: `limit`, or the largest int64 when 0 (no limit) or larger.
int64_t LimitOrAll(size_t limit);

// Returns the migrations of the SQLite backend, in version order.
std::span<const Migration> SqliteMigrations();

}  // namespace abacus
