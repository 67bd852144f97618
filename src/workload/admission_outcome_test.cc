#include "workload/admission_outcome.h"

#include <gtest/gtest.h>

#include "workload/documents.h"

namespace abacus {
namespace {

TEST(AdmissionOutcomeTest, TheLabelsReadBackIntoTheTypedOutcome) {
  AdmissionOutcome o{NetworkClass::kInternal, {"train", "test"}};
  std::map<std::string, std::string> labels = {{"model", "llama"}, {std::string(kNetworkLabel), "internet"}};
  WriteAdmissionLabels(o, labels);
  EXPECT_EQ(labels.at(std::string(kNetworkLabel)), "internal");
  EXPECT_EQ(labels.at(std::string(kAllowedPoolsLabel)), "train,test");
  EXPECT_EQ(labels.at("model"), "llama");
  EXPECT_EQ(AdmissionFromLabels(labels), o);
  // No outcome: no labels (a submitter's are removed).
  WriteAdmissionLabels(AdmissionOutcome{}, labels);
  EXPECT_EQ(labels.size(), 1u);
  EXPECT_EQ(AdmissionFromLabels(labels), AdmissionOutcome{});
}

TEST(AdmissionOutcomeTest, AnUnknownNetworkIsTheRuntimeDefaultAndEmptyPoolsAreDropped) {
  AdmissionOutcome o = AdmissionFromLabels({{std::string(kNetworkLabel), "wifi"}, {std::string(kAllowedPoolsLabel), ",a,,b,"}});
  EXPECT_FALSE(o.network.has_value());
  EXPECT_EQ(o.pools, (std::vector<std::string>{"a", "b"}));
}

TEST(AdmissionOutcomeTest, ADecodedWorkloadCarriesTheOutcomeItsLabelsShow) {
  ParsedDocuments parsed = ParseDocuments(
      "kind: TrainingJob\nname: x\nproject: t/p\nqueue: q\n"
      "labels: {abacus.io/allowed-pools: 'test,infer', abacus.io/network: isolated}\n"
      "spec:\n  command: [x]\n  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n",
      "x.yaml");
  ASSERT_EQ(parsed.documents.size(), 1u) << parsed.diagnostics.ToString();
  const Workload* w = parsed.documents[0].workload();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->admission.pools, (std::vector<std::string>{"test", "infer"}));
  ASSERT_TRUE(w->admission.network.has_value());
  EXPECT_EQ(*w->admission.network, NetworkClass::kIsolated);
}

}  // namespace
}  // namespace abacus
