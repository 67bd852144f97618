// libpq is loaded on first use: a missing library is a clear error, and the real one resolves
// every function the store calls.
#include "store/postgres/libpq.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

TEST(LibPqTest, AMissingLibraryIsAnErrorNamingItAndItsPackage) {
  auto r = LoadLibPqFrom("libpq-does-not-exist.so.5");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("libpq-does-not-exist.so.5"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("Debian package libpq5"), std::string::npos) << r.status().message();
}

TEST(LibPqTest, ALibraryWithoutTheFunctionsIsRefusedByName) {
  auto r = LoadLibPqFrom("libz.so.1");  // loads, but is not libpq
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lacks PQconnectdb"), std::string::npos) << r.status().message();
}

TEST(LibPqTest, TheInstalledLibraryResolvesEveryFunction) {
  auto r = LoadLibPq();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(&Pq(), *r);
  EXPECT_NE(Pq().connectdb, nullptr);
  EXPECT_NE(Pq().clear, nullptr);
}

}  // namespace
}  // namespace abacus
