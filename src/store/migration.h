// Migration: one numbered step of a backend's schema. Versions start at 1 and increase by 1;
// every backend ships the same versions with the same logical tables, in its own SQL dialect.
#pragma once

#include <span>
#include <string_view>

namespace abacus {

struct Migration {
  int version = 0;
  std::string_view name;  // "initial", "journal_time_index", ...
  std::string_view sql;   // one or more statements, run in one transaction
};

// Returns the migrations of the SQLite backend, in version order.
std::span<const Migration> SqliteMigrations();

}  // namespace abacus
