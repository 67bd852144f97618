#include "model/extended_resource.h"

#include <gtest/gtest.h>

#include "model/extended_request.h"
#include "model/resources.h"

namespace abacus {
namespace {

TEST(ExtendedResourceTest, ParsesNamesAndRejectsReservedOnes) {
  EXPECT_TRUE(ExtendedResource::Parse("rdma/hca").ok());
  EXPECT_TRUE(ExtendedResource::Parse("ephemeral-storage").ok());
  EXPECT_TRUE(ExtendedResource::Parse("license/matlab").ok());
  EXPECT_FALSE(ExtendedResource::Parse("cpu").ok());
  EXPECT_FALSE(ExtendedResource::Parse("memory").ok());
  EXPECT_FALSE(ExtendedResource::Parse("gpu/nvidia").ok());
  EXPECT_FALSE(ExtendedResource::Parse("RDMA/hca").ok());
  EXPECT_FALSE(ExtendedResource::Parse("rdma/").ok());
  EXPECT_FALSE(ExtendedResource::Parse("").ok());
}

// A task's request (specs and traces alike): whole, above zero, within the quantity limit.
TEST(ExtendedResourceTest, RequestsArePositiveAndBounded) {
  auto hca = ExtendedResource::Parse("rdma/hca").value();
  EXPECT_EQ(ParseExtendedRequest(hca, "2").value(), 2);
  EXPECT_EQ(ParseExtendedRequest(hca, "0").status().message(), "rdma/hca: must be positive, got 0");
  EXPECT_FALSE(ParseExtendedRequest(hca, "1.5").ok());
  EXPECT_FALSE(ParseExtendedRequest(hca, "-1").ok());
  EXPECT_FALSE(ParseExtendedRequest(hca, "2000000000").ok());  // above the limit for counts
  auto disk = ExtendedResource::Parse("ephemeral-storage").value();
  EXPECT_EQ(ParseExtendedRequest(disk, "100Gi").value(), int64_t{100} << 30);
  EXPECT_FALSE(ParseExtendedRequest(disk, "2Pi").ok());  // above the limit for bytes
}

TEST(ExtendedResourceTest, AmountsAreWholeUnitsOrBytes) {
  auto hca = ExtendedResource::Parse("rdma/hca").value();
  EXPECT_FALSE(hca.is_bytes());
  EXPECT_EQ(hca.ParseAmount("4").value(), 4);
  EXPECT_FALSE(hca.ParseAmount("500m").ok());
  EXPECT_FALSE(hca.ParseAmount("-1").ok());
  auto disk = ExtendedResource::Parse("ephemeral-storage").value();
  EXPECT_TRUE(disk.is_bytes());
  EXPECT_EQ(disk.ParseAmount("500Gi").value(), int64_t{500} << 30);
  EXPECT_EQ(disk.FormatAmount(int64_t{500} << 30), "500Gi");
  EXPECT_EQ(hca.FormatAmount(4), "4");
}

TEST(ExtendedResourceTest, ResourceVectorsCarryThemBesideDevices) {
  ExtendedId hca = ExtendedResource::Parse("rdma/hca").value().Intern();
  EXPECT_EQ(ExtendedResource::Parse("rdma/hca").value().Intern(), hca);
  ResourceVector v;
  v.Set(ResourceKey::Cpu(), 2000);
  v.Set(ResourceKey::Extended(hca), 3);
  EXPECT_EQ(v.extended(hca), 3);
  EXPECT_EQ(v.cpu_milli(), 2000);
  EXPECT_EQ(ResourceKey::Unpack(ResourceKey::Extended(hca).packed()), ResourceKey::Extended(hca));
  EXPECT_NE(ResourceKey::Extended(0).packed(), ResourceKey::DeviceMemory(0).packed());
  EXPECT_NE(v.ToString().find("rdma/hca=3"), std::string::npos);
  ResourceVector limit;
  limit.Set(ResourceKey::Cpu(), 4000);
  limit.Set(ResourceKey::Extended(hca), 2);
  EXPECT_FALSE(v.FitsIn(limit));
}

TEST(ExtendedResourceTest, ParsesDeclarationLists) {
  auto m = ParseExtendedList("rdma/hca=4,ephemeral-storage=500Gi,license/matlab=0").value();
  EXPECT_EQ(m.at("rdma/hca"), 4);
  EXPECT_EQ(m.at("ephemeral-storage"), int64_t{500} << 30);
  EXPECT_EQ(m.at("license/matlab"), 0);
  EXPECT_FALSE(ParseExtendedList("rdma/hca").ok());
  EXPECT_FALSE(ParseExtendedList("cpu=4").ok());
}

}  // namespace
}  // namespace abacus
