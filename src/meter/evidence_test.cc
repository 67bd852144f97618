#include "meter/evidence.h"

#include <gtest/gtest.h>

#include "meter/meter_test_util.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers

class EvidenceTest : public ::testing::Test {
 protected:
  EvidenceTest() {
    d_.inventory = {{"east", "default", kA100, 2, 8, 8}, {"east", "default", kT4, 1, 4, 3}};
    d_.quotas = {{"nlp-train", "nlp", "research", kA100, 4000, std::nullopt},
                 {"vision-exp", "vision", "research", kA100, 4000, std::nullopt}};
    d_.intervals = ScenarioIntervals();
    WorkloadSummary w;
    w.id = "train-a";
    w.kind = "TrainingJob";
    w.queue = "nlp-train";
    w.flavor = kA100;
    w.submitted = T(1, 7);
    w.admitted = T(1, 8);
    w.finished = T(2, 2);
    w.state = "Succeeded";
    d_.workloads.push_back(w);
    d_.preemptions = {{T(1, 16), "Reclaim", "train-a", "nlp", "nlp-train", kA100, 4000, "eval-b", "vision-exp"}};
    for (int dev = 0; dev < 4; ++dev) {
      for (int h = 8; h < 16; ++h) d_.samples.push_back({"gpu-1", dev, T(1, h), dev < 2 && h >= 12 ? 0.01 : 0.9});
    }
    for (int h = 10; h < 14; ++h) d_.samples.push_back({"gpu-2", 0, T(1, h), 0.0});
    d_.shortages = {{"svc-1", "chat", "vision", "vision-serve", kT4, 3, 1, T(1, 10), T(1, 12)}};
    d_.audit = {{T(1, 14), "user alice", "cancel", "workload", "notebook"},
                {T(1, 16), "scheduler", "preempt", "workload", "train-a"},
                {T(1, 17), "user bob", "apply", "queue", "nlp-train"},
                {T(1, 18), "user carol", "create", "workload", "x"}};
    d_.prices = ScenarioPrices();
    in_ = d_.Input(ScenarioWindow(), std::chrono::hours(1));
    in_.title = "POC <east> & co";
  }

  EvidenceData d_;
  EvidenceInput in_;
};

TEST_F(EvidenceTest, MarkdownHasEverySectionAndTheNumbers) {
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  EXPECT_TRUE(md.starts_with("# POC <east> & co\n")) << md.substr(0, 80);
  for (const char* title : {"Resource inventory", "Queues, quotas, use and borrowing",
                            "Submissions and scheduling results", "Utilization", "Queue waits",
                            "Failures by reason", "Reclaim and preemption actions", "Inference shortages",
                            "Manual interventions", "Audit chain"}) {
    EXPECT_NE(md.find(std::string("\n## ") + title + "\n"), std::string::npos) << title;
  }
  EXPECT_NE(md.find("| east | default | gpu/nvidia/A100-80G | 2 | 8 | 8 |"), std::string::npos);
  EXPECT_NE(md.find("- **Cost**: 131.96 USD\n"), std::string::npos);
  EXPECT_NE(md.find("- **Manual interventions**: 2\n"), std::string::npos);
  // A100: 8 devices × 48h = 384 capacity; 42 allocated (10.9%); 34 measured; busy
  // (2×8h×0.9 + 2×(4h×0.9 + 4h×0.01)) / 34 = 63.8%; idle 8 + 2.
  EXPECT_NE(md.find("| gpu/nvidia/A100-80G | 8 | 384.000 | 42.000 | 10.9 | 34.000 | 63.8 | 10.000 |"),
            std::string::npos)
      << md;
  // nlp-train used 40 of 4 × 48 = 192 nominal device-hours.
  EXPECT_NE(md.find("| nlp-train | nlp | research | gpu/nvidia/A100-80G | 4 | 40.000 | 20.8 |"), std::string::npos);
  EXPECT_NE(md.find("| Reclaim | nlp-train | 1 | 4 |"), std::string::npos);
  EXPECT_NE(md.find("| cancel | workload | 1 |"), std::string::npos);
  EXPECT_NE(md.find("verified: 4 entries, chain intact"), std::string::npos);
}

TEST_F(EvidenceTest, HtmlIsSelfContainedWithInlineSvgCharts) {
  std::string html = RenderEvidence(in_, EvidenceFormat::kHtml);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<h1>POC &lt;east&gt; &amp; co</h1>"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(html.find("Devices by flavor"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  size_t urls = 0, svg_ns = 0;
  for (size_t p = html.find("http"); p != std::string::npos; p = html.find("http", p + 1)) ++urls;
  for (size_t p = html.find("http://www.w3.org/2000/svg"); p != std::string::npos;
       p = html.find("http://www.w3.org/2000/svg", p + 1)) {
    ++svg_ns;
  }
  EXPECT_EQ(urls, svg_ns);  // the SVG namespace is the only URL
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST_F(EvidenceTest, JsonHasSummarySectionsAndAuditStatus) {
  auto j = nlohmann::json::parse(RenderEvidence(in_, EvidenceFormat::kJson));
  ASSERT_EQ(j["sections"].size(), 10u);
  EXPECT_EQ(j["sections"][0]["id"], "inventory");
  EXPECT_EQ(j["sections"][0]["tables"][0]["rows"][1]["healthyDevices"], 3);
  EXPECT_EQ(j["summary"]["Manual interventions"], "2");
  EXPECT_EQ(j["auditChain"]["ok"], true);
  EXPECT_EQ(j["window"]["from"], "2026-03-01T00:00:00.000Z");
}

TEST_F(EvidenceTest, ABrokenChainIsSaidPlainly) {
  in_.audit_chain = {true, false, 7, "seq 7: hash does not match its content (entry edited)"};
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  EXPECT_NE(md.find("BROKEN after checking 7 entries: seq 7: hash does not match"), std::string::npos);
}

TEST(EvidenceRulesTest, ManualInterventionsArePeopleActingOnWork) {
  EXPECT_TRUE(IsManualIntervention({Time{}, "user alice", "cancel", "workload", "x"}));
  EXPECT_TRUE(IsManualIntervention({Time{}, "user bob", "apply", "Queue", "q"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "user bob", "apply", "Tenant", "t"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "scheduler", "preempt", "workload", "x"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "user carol", "create", "workload", "x"}));
  EXPECT_EQ(ParseEvidenceFormat("md").value(), EvidenceFormat::kMarkdown);
  EXPECT_EQ(ParseEvidenceFormat("html").value(), EvidenceFormat::kHtml);
  EXPECT_FALSE(ParseEvidenceFormat("pdf").ok());
}

}  // namespace
}  // namespace abacus::meter
