#include "server/ui_assets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace abacus::server {
namespace {

const std::vector<UiAsset> kAssets = {
    {"index.html", "<!doctype html><div id=app></div>"},
    {"assets/index-AbC123.js", "console.log(1)"},
    {"assets/index-AbC123.css", "body{}"},
    {"favicon.svg", "<svg/>"},
};

TEST(UiAssetsTest, UiPathsAreExactlyUiAndBelow) {
  EXPECT_TRUE(IsUiPath("/ui"));
  EXPECT_TRUE(IsUiPath("/ui/"));
  EXPECT_TRUE(IsUiPath("/ui/workloads/wl-1"));
  EXPECT_FALSE(IsUiPath("/uix"));
  EXPECT_FALSE(IsUiPath("/api/v1/ui/x"));
  EXPECT_FALSE(IsUiPath("/"));
}

TEST(UiAssetsTest, BareUiRedirectsToTheSlash) {
  UiAnswer a = ResolveUi("/ui", kAssets);
  EXPECT_EQ(a.status, 301);
  EXPECT_EQ(a.location, "/ui/");
}

TEST(UiAssetsTest, IndexRevalidatesAndHashedAssetsAreImmutable) {
  UiAnswer index = ResolveUi("/ui/", kAssets);
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(index.cache_control, "no-cache");
  EXPECT_EQ(index.body, kAssets[0].body);

  UiAnswer js = ResolveUi("/ui/assets/index-AbC123.js", kAssets);
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.cache_control, "public, max-age=31536000, immutable");
  EXPECT_EQ(js.body, "console.log(1)");

  EXPECT_EQ(ResolveUi("/ui/assets/index-AbC123.css", kAssets).content_type, "text/css; charset=utf-8");
  UiAnswer svg = ResolveUi("/ui/favicon.svg", kAssets);
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(svg.cache_control, "no-cache");  // not hashed: may change with the next build
}

TEST(UiAssetsTest, AppRoutesFallBackToIndexButMissingFilesAre404) {
  for (const char* route : {"/ui/ledger", "/ui/queues", "/ui/workloads/wl-abc", "/ui/login"}) {
    UiAnswer a = ResolveUi(route, kAssets);
    EXPECT_EQ(a.status, 200) << route;
    EXPECT_EQ(a.body, kAssets[0].body) << route;
    EXPECT_EQ(a.cache_control, "no-cache") << route;
  }
  EXPECT_EQ(ResolveUi("/ui/assets/index-old.js", kAssets).status, 404);
  // A missing file answers the API's error object (the HTTP fuzz target found a plain-text 404
  // for GET /ui/api/v1/auditaudit.head).
  UiAnswer missing = ResolveUi("/ui/robots.txt", kAssets);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "application/json");
  nlohmann::json error = nlohmann::json::parse(missing.body, nullptr, false);
  EXPECT_EQ(error["error"]["code"], "not_found") << missing.body;
}

TEST(UiAssetsTest, WithoutABuiltUiEveryPathSaysHowToBuildIt) {
  for (const char* path : {"/ui/", "/ui/ledger", "/ui/assets/x.js"}) {
    UiAnswer a = ResolveUi(path, {});
    EXPECT_EQ(a.status, 404) << path;
    EXPECT_EQ(a.content_type, "text/html; charset=utf-8");
    EXPECT_NE(a.body.find("make build"), std::string_view::npos);
  }
}

TEST(UiAssetsTest, ContentTypesByExtension) {
  EXPECT_EQ(UiContentType("a/b.json"), "application/json");
  EXPECT_EQ(UiContentType("x.png"), "image/png");
  EXPECT_EQ(UiContentType("x.woff2"), "font/woff2");
  EXPECT_EQ(UiContentType("noext"), "application/octet-stream");
}

}  // namespace
}  // namespace abacus::server
