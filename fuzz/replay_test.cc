// Replays every file of fuzz/corpus/<target>/ through its target: the seeds and every crash
// input ever found stay regression tests. A target aborts on a broken property, which fails
// this test with the file's name in the log.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_targets.h"

namespace abacus::fuzz {
namespace {

using Target = int (*)(const uint8_t*, size_t);

size_t ReplayCorpus(const std::string& name, Target target) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(ABACUS_SOURCE_DIR) / "fuzz" / "corpus" / name;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(e.path().string());
    std::fprintf(stderr, "%s\n", e.path().filename().c_str());
    EXPECT_EQ(target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    ++n;
  }
  return n;
}

TEST(FuzzReplayTest, QuantityCorpus) { EXPECT_GT(ReplayCorpus("quantity_fuzz", FuzzQuantity), 5u); }
TEST(FuzzReplayTest, WorkloadYamlCorpus) { EXPECT_GT(ReplayCorpus("workload_yaml_fuzz", FuzzWorkloadYaml), 5u); }
TEST(FuzzReplayTest, WorkloadJsonCorpus) { EXPECT_GT(ReplayCorpus("workload_json_fuzz", FuzzWorkloadJson), 5u); }
TEST(FuzzReplayTest, HttpRequestCorpus) { EXPECT_GT(ReplayCorpus("http_request_fuzz", FuzzHttpRequest), 20u); }

}  // namespace
}  // namespace abacus::fuzz
