#include "server/ui_assets.h"

#include <algorithm>

namespace abacus::server {
namespace {

constexpr std::string_view kPrefix = "/ui/";

constexpr std::string_view kNotBuilt = R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Abacus: dashboard not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 4em auto">
<h1>The Abacus dashboard is not built into this server</h1>
<p>This binary was built without <code>web/dist</code>. Build the dashboard and the server with</p>
<pre>make build</pre>
<p>(it runs <code>npm ci</code> and <code>npm run build</code> in <code>web/</code>, then embeds
<code>web/dist</code> into <code>abacus</code>). The REST API under <code>/api/v1/</code> works without it.
See docs/ui.md.</p>
</body></html>
)";

// An error is the API's JSON error object everywhere, the dashboard's missing files included
// (docs/api.md "Errors"; the HTTP fuzz target holds every answer to it).
constexpr std::string_view kMissing = R"({"error":{"code":"not_found","message":"no such file in the dashboard"}})";

const UiAsset* Find(std::span<const UiAsset> assets, std::string_view path) {
  auto it = std::find_if(assets.begin(), assets.end(), [&](const UiAsset& a) { return a.path == path; });
  return it == assets.end() ? nullptr : &*it;
}

bool HasExtension(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return last.find('.') != std::string_view::npos;
}

UiAnswer FileAnswer(const UiAsset& a) {
  UiAnswer out;
  out.content_type = UiContentType(a.path);
  // Vite names what it puts under assets/ by content hash: such a URL never changes meaning.
  out.cache_control = a.path.rfind("assets/", 0) == 0 ? "public, max-age=31536000, immutable" : "no-cache";
  out.body = a.body;
  return out;
}

}  // namespace

bool IsUiPath(std::string_view path) { return path == "/ui" || path.rfind(kPrefix, 0) == 0; }

std::string UiContentType(std::string_view path) {
  size_t dot = path.rfind('.');
  std::string_view ext = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js" || ext == "mjs") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "json" || ext == "map") return "application/json";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "ico") return "image/x-icon";
  if (ext == "woff2") return "font/woff2";
  if (ext == "txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

UiAnswer ResolveUi(std::string_view path, std::span<const UiAsset> assets) {
  UiAnswer out;
  if (path == "/ui") {
    out.status = 301;
    out.location = std::string(kPrefix);
    out.content_type = "text/plain; charset=utf-8";
    out.body = "see /ui/\n";
    return out;
  }
  std::string_view rel = path.substr(kPrefix.size());
  const UiAsset* index = Find(assets, "index.html");
  if (index == nullptr) {
    out.status = 404;
    out.content_type = "text/html; charset=utf-8";
    out.cache_control = "no-cache";
    out.body = kNotBuilt;
    return out;
  }
  if (rel.empty()) return FileAnswer(*index);
  if (const UiAsset* a = Find(assets, rel)) return FileAnswer(*a);
  if (rel.rfind("assets/", 0) == 0 || HasExtension(rel)) {
    out.status = 404;
    out.content_type = "application/json";
    out.cache_control = "no-cache";
    out.body = kMissing;
    return out;
  }
  return FileAnswer(*index);  // a route of the app (/ui/queues, /ui/workloads/ID)
}

}  // namespace abacus::server
