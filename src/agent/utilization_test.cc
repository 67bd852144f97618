// Utilization sampling: simulated devices, NVML over a tiny fake table, task CPU rates on a
// manual clock, and a real task under the process runtime.
#include "agent/utilization.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "agent/discover/fake.h"
#include "agent/runtime/process_runtime.h"

namespace abacus::agent {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TEST(UtilizationTest, SimulatedDevicesReportWhatWasSet) {
  auto devices = MakeFakeDevices(*ParseFakeDeviceSpecs("gpu:nvidia:A100-80G:2"), "n");
  auto sim = std::make_unique<SimulatedDeviceSampler>(devices);
  EXPECT_TRUE(sim->Set(devices[1].uuid, 87, 30 * kGi));
  EXPECT_FALSE(sim->Set("nope", 1, 1));
  ManualClock clock;
  std::vector<std::unique_ptr<DeviceSampler>> samplers;
  samplers.push_back(std::move(sim));
  UtilizationSampler sampler(clock, std::move(samplers), nullptr);
  UtilizationSnapshot snap = sampler.Sample();
  EXPECT_EQ(snap.taken_at, clock.Now());
  ASSERT_EQ(snap.devices.size(), 2u);
  EXPECT_EQ(snap.devices[0], (DeviceUtilization{devices[0].uuid, 0, 0, 0, 80 * kGi}));
  EXPECT_EQ(snap.devices[1].compute_percent, 87);
  EXPECT_EQ(snap.devices[1].memory_used_bytes, 30 * kGi);
  EXPECT_TRUE(snap.tasks.empty());
}

TEST(UtilizationTest, TaskCpuRateFromCumulativeUsage) {
  ManualClock clock;
  std::map<std::string, CgroupUsage> usage = {{"a", {1'000'000, 100}}, {"b", {0, 5}}};
  UtilizationSampler sampler(clock, {}, [&] { return usage; });
  auto first = sampler.Sample();
  ASSERT_EQ(first.tasks.size(), 2u);
  EXPECT_EQ(first.tasks[0].cpu_milli, -1);  // no previous sample
  clock.Advance(std::chrono::seconds(2));
  usage["a"].cpu_usage_usec += 3'000'000;  // 1.5 CPUs over 2 s
  usage["b"].cpu_usage_usec += 100'000;    // 0.05 CPUs
  usage["c"] = {7, 7};                     // a new task
  auto second = sampler.Sample();
  ASSERT_EQ(second.tasks.size(), 3u);
  EXPECT_EQ(second.tasks[0].cpu_milli, 1500);
  EXPECT_EQ(second.tasks[1].cpu_milli, 50);
  EXPECT_EQ(second.tasks[2].cpu_milli, -1);
  EXPECT_EQ(second.tasks[0].memory_bytes, 100);
}

TEST(UtilizationTest, NvmlSamplerWithoutLibraryReportsNothing) {
  NvmlDeviceSampler sampler([] { return OpenNvml("libnvidia-ml-does-not-exist.so.1"); });
  EXPECT_TRUE(sampler.Sample().empty());
}

TEST(UtilizationTest, RealTaskUsage) {
  ManualClock clock;
  auto dir = std::filesystem::temp_directory_path() / ("abacus-util-" + std::to_string(::getpid()));
  {
    ProcessRuntime rt({dir.string(), nullptr, {}, true}, clock);
    ASSERT_TRUE(rt.Start({"u1", {"sleep", "5"}, {}, "", {}, 0, 0}).ok());
    UtilizationSampler sampler(clock, {}, TaskUsageFrom(rt));
    auto snap = sampler.Sample();
    ASSERT_EQ(snap.tasks.size(), 1u);
    EXPECT_EQ(snap.tasks[0].task_id, "u1");
    EXPECT_GE(snap.tasks[0].cpu_usage_usec, 0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace abacus::agent
