// The web dashboard's files (web/dist, built by `make build` with npm and Vite) embedded into the
// binary, and how a GET under /ui/ is answered from them: content types, caching headers (hashed
// assets under assets/ are immutable, everything else revalidates), the single-page-app fallback
// to index.html, and a page saying how to build the UI when the binary carries none. docs/ui.md.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace abacus::server {

// One embedded file: its path below web/dist ("index.html", "assets/index-3f2a.js").
struct UiAsset {
  std::string_view path;
  std::string_view body;
};

// The files embedded at build time (generated from web/dist by web/embed.cmake); empty when
// web/dist did not exist when the server was built.
std::span<const UiAsset> EmbeddedUiAssets();

// The answer to one GET under /ui.
struct UiAnswer {
  int status = 200;
  std::string content_type;
  std::string cache_control;
  std::string location;  // a redirect's target; empty otherwise
  std::string_view body;
};

// True for /ui and every path below /ui/ (served without a token; the page's API calls carry it).
bool IsUiPath(std::string_view path);
// The Content-Type of a file by its extension (text types with charset=utf-8).
std::string UiContentType(std::string_view path);
// Answers GET `path` (an IsUiPath path) from `assets`: /ui redirects to /ui/; a file that exists
// is served; a missing file under assets/ or with an extension is 404; any other path is the
// app's route and gets index.html; with no assets at all, a page saying how to build the UI.
UiAnswer ResolveUi(std::string_view path, std::span<const UiAsset> assets);

}  // namespace abacus::server
