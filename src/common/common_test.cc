#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/diagnostic.h"
#include "common/ids.h"
#include "common/status.h"

namespace abacus {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  ABACUS_ASSIGN_OR_RETURN(int h, Half(x));
  ABACUS_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkAndErrorsCarryCodeAndMessage) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = NotFound("queue 'x'");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not_found: queue 'x'");
  EXPECT_EQ(s.WithContext("apply").message(), "apply: queue 'x'");
}

TEST(StatusTest, ResultPropagatesThroughAssignOrReturn) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

TEST(ClockTest, ManualClockMovesOnlyWhenTold) {
  ManualClock clock(FromMicros(0));
  EXPECT_EQ(ToMicros(clock.Now()), 0);
  clock.Advance(std::chrono::seconds(3));
  EXPECT_EQ(ToMicros(clock.Now()), 3'000'000);
  EXPECT_EQ(FormatTime(clock.Now()), "1970-01-01T00:00:03.000Z");
}

TEST(ClockTest, DurationsReadLikeAPersonWouldWriteThem) {
  using namespace std::chrono;
  EXPECT_EQ(FormatDuration(microseconds(850)), "850us");
  EXPECT_EQ(FormatDuration(milliseconds(850)), "850ms");
  EXPECT_EQ(FormatDuration(seconds(42)), "42s");
  EXPECT_EQ(FormatDuration(seconds(192)), "3m12s");
  EXPECT_EQ(FormatDuration(minutes(302)), "5h02m");
  EXPECT_EQ(FormatDuration(hours(52)), "2d04h");
}

TEST(IdsTest, SequentialIdsAreDeterministicAndRandomIdsDiffer) {
  SequentialIdGenerator seq;
  EXPECT_EQ(seq.Next("wl"), "wl-000001");
  EXPECT_EQ(seq.Next("wl"), "wl-000002");
  RandomIdGenerator rnd;
  std::string a = rnd.Next("wl"), b = rnd.Next("wl");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 13u);
}

TEST(IdsTest, TimeOrderedIdsGrowInIssueOrderAndNeverRepeat) {
  TimeOrderedIdGenerator gen;
  std::vector<std::vector<std::string>> per_thread(4);
  std::vector<std::thread> threads;
  for (auto& out : per_thread) {
    threads.emplace_back([&gen, &out] {
      for (int i = 0; i < 50000; ++i) out.push_back(gen.Next("wl"));
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& out : per_thread) {
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].size(), 13u) << out[i];
      ASSERT_EQ(out[i].rfind("wl-", 0), 0u) << out[i];
      ASSERT_TRUE(IsValidName(out[i])) << out[i];
      if (i > 0) {
        ASSERT_LT(out[i - 1], out[i]);  // each caller sees them grow
      }
      all.insert(out[i]);
    }
  }
  EXPECT_EQ(all.size(), 200000u);
  // Another generator (a restart) resumed from the largest id issued continues after it, even
  // within the same second, and ignores ids of another form.
  TimeOrderedIdGenerator other;
  other.Resume("wl-not-ours");
  other.Resume(*all.rbegin());
  std::string next = other.Next("wl");
  EXPECT_GT(next, *all.rbegin());
  EXPECT_EQ(all.count(next), 0u);
  // A clock behind the ids (an HA takeover on a server whose clock lags) still issues larger ones.
  TimeOrderedIdGenerator behind;
  behind.Resume("wl-zzzzzz0000");
  EXPECT_EQ(behind.Next("wl"), "wl-zzzzzz0001");
}

TEST(IdsTest, NamesFollowTheDnsLikeRule) {
  EXPECT_TRUE(IsValidName("nlp-train"));
  EXPECT_TRUE(IsValidName("a"));
  EXPECT_FALSE(IsValidName(""));
  EXPECT_FALSE(IsValidName("-x"));
  EXPECT_FALSE(IsValidName("Upper"));
  EXPECT_FALSE(IsValidName(std::string(64, 'a')));
}

TEST(DiagnosticTest, PrintsFileLineFieldMessage) {
  Diagnostics d;
  d.Add("w.yaml", 7, "spec.taskGroups[0].replicas", "must be >= 1, got -2");
  d.Add("", 0, "", "empty document");
  EXPECT_EQ(d.ToString(), "w.yaml:7: spec.taskGroups[0].replicas: must be >= 1, got -2\nempty document\n");
  EXPECT_EQ(d.ToStatus().code(), StatusCode::kInvalidArgument);
}

// A value a client sent is quoted in messages: its control characters are escaped, so a name
// "a\nb" cannot split an error into a line that reads like the server's own (probe 2026-12-07).
TEST(DiagnosticTest, ControlCharactersOfQuotedValuesAreEscaped) {
  Diagnostics d;
  d.Add({"request", 1, "name", "invalid name 'a\nb\x01\t'"});
  EXPECT_EQ(d.ToString(), "request:1: name: invalid name 'a\\nb\\x01\\t'\n");
}

TEST(ClockTest, ParseTimeReadsRfc3339AndDates) {
  auto t = ParseTime("2026-12-02T17:51:20.123Z");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(FormatTime(*t), "2026-12-02T17:51:20.123Z");
  auto offset = ParseTime("2026-12-03T01:51:20.123+08:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(*offset, *t);
  auto date = ParseTime("1970-01-02");
  ASSERT_TRUE(date.ok());
  EXPECT_EQ(ToMicros(*date), int64_t{86400} * 1'000'000);
  auto micros = ParseTime("2026-12-02T17:51:20.000001Z");
  ASSERT_TRUE(micros.ok());
  EXPECT_EQ(ToMicros(*micros) % 1'000'000, 1);
  for (const char* bad : {"", "2026-13-01", "2026-12-02T17:51", "2026-12-02T17:51:20", "2026-12-02T17:51:20.Z",
                          "2026-12-02T17:51:20Zjunk", "yesterday"}) {
    EXPECT_FALSE(ParseTime(bad).ok()) << bad;
  }
  EXPECT_NE(ParseTime("yesterday").status().message().find("RFC 3339"), std::string::npos);
}

}  // namespace
}  // namespace abacus
