#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "fuzz_targets.h"
#include "server/control_plane.h"
#include "server/http_server.h"

namespace abacus::fuzz {
namespace {

using nlohmann::json;

// The organisation the fuzzed requests run against: two tenants, three projects, a pool with
// one simulated GPU node, users of every role and an admission policy for t2.
constexpr char kOrg[] = R"(kind: Tenant
name: t1
---
kind: Project
name: p1
tenant: t1
---
kind: Project
name: p2
tenant: t1
---
kind: Tenant
name: t2
---
kind: Project
name: p3
tenant: t2
---
kind: Queue
name: q1
tenant: t1
quotas:
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 256Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 4}
---
kind: Queue
name: q2
tenant: t2
quotas:
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 256Gi}
---
kind: User
name: tia
roles: [{role: tenant-admin, tenant: t1}]
---
kind: User
name: mia
roles: [{role: member, project: t1/p1}]
---
kind: User
name: vic
roles: [{role: viewer, tenant: t1}]
---
kind: AdmissionPolicy
name: t2-rules
tenants: [t2]
spec:
  images: {allowedRegistries: [registry.local]}
  network: isolated
  maxResources: {cpu: 8}
)";

// Workloads the requests can find by name: ft-1 (t1/p1), b-1 (t1/p2), svc (t2/p3).
constexpr char kWorkloads[] = R"(kind: TrainingJob
name: ft-1
project: t1/p1
queue: q1
spec:
  command: ["true"]
  taskGroups:
    - name: w
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
---
kind: BatchJob
name: b-1
project: t1/p2
queue: q1
spec:
  command: ["echo", "hi"]
  taskGroups:
    - name: t
      resources: {cpu: 1, memory: 1Gi}
  tasks: 4
  parallelism: 2
---
kind: InferenceService
name: svc
project: t2/p3
queue: q2
spec:
  image: registry.local/serve:1
  replicas: 1
  taskGroups:
    - name: s
      resources: {cpu: 2, memory: 2Gi}
)";

// Placeholders an input may hold where a bearer token goes; replaced by the real tokens, so that
// inputs reach the routes behind authentication and stay reproducible across runs.
struct Tokens {
  std::vector<std::pair<std::string, std::string>> by_placeholder;
};

struct Harness {
  std::filesystem::path dir;
  std::unique_ptr<server::ControlPlane> cp;
  std::unique_ptr<server::HttpServer> http;
  Tokens tokens;
};

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

[[noreturn]] void SetupFailed(const std::string& what) {
  std::fprintf(stderr, "http_request_fuzz: setup failed: %s\n", what.c_str());
  std::abort();
}

Harness* MakeHarness() {
  auto* h = new Harness();  // lives for the whole process (threads of the ControlPlane use it)
  (void)InitLogging("off");  // thousands of requests a second; failures are what the target reports
  char tmpl[] = "/tmp/abacus-http-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) SetupFailed("mkdtemp");
  h->dir = tmpl;
  static std::filesystem::path s_dir = h->dir;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(s_dir, ec);
  });
  server::ControlPlaneOptions o;
  o.data_dir = h->dir.string();
  o.store_url = "memory://";
  auto cp = server::ControlPlane::Open(o);
  if (!cp.ok()) SetupFailed(cp.status().ToString());
  h->cp = std::move(*cp);
  if (auto r = h->cp->Apply(kOrg, false, "org.yaml", nullptr, {}, false, nullptr); !r.ok()) SetupFailed(r.status().ToString());
  json node = {{"name", "gpu-1"},
               {"cpu", "64"},
               {"memory", "512Gi"},
               {"devices", {{{"index", 0}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}},
                            {{"index", 1}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}}}}};
  if (auto r = h->cp->PutNode(node, nullptr); !r.ok()) SetupFailed(r.status().ToString());
  if (auto r = h->cp->Submit(kWorkloads, false, "workloads.yaml", nullptr, {}, false, nullptr); !r.ok()) SetupFailed(r.status().ToString());
  auto& t = h->tokens.by_placeholder;
  t.emplace_back("@admin@", ReadFile(h->dir / "admin.token"));
  t.emplace_back("@join@", ReadFile(h->dir / "join.token"));
  govern::Principal admin = govern::Principal::User("admin", {RoleBinding{Role::kAdmin, "", "", ""}});
  for (auto [placeholder, user] : {std::pair{"@tadmin@", "tia"}, {"@member@", "mia"}, {"@viewer@", "vic"}}) {
    auto issued = h->cp->governance().IssueToken(admin, user, "fuzz", std::nullopt, nullptr);
    if (!issued.ok()) SetupFailed(issued.status().ToString());
    t.emplace_back(placeholder, issued->secret);
  }
  server::HttpOptions ho;
  ho.max_body_bytes = 64 * 1024;
  h->http = std::make_unique<server::HttpServer>(*h->cp, ho);
  // At exit the server's threads must stop before the static objects they read are destroyed:
  // the loop read a function-local static the exit handlers had freed (ASan, heap-use-after-free
  // in FindDefaultPriorityClass). A handler registered now runs before the destructors of every
  // static constructed so far, and a scheduling cycle has constructed those the loop reads.
  h->cp->WaitForCycle();
  static server::ControlPlane* s_cp = h->cp.get();
  std::atexit([] { s_cp->Shutdown(); });
  return h;
}

Harness& Get() {
  static Harness* h = MakeHarness();
  return *h;
}

[[noreturn]] void Fail(const std::string& why, std::string_view request, const std::string& response) {
  std::fprintf(stderr, "http_request_fuzz: %s\n--- request (%zu bytes)\n%.*s\n--- response\n%s\n", why.c_str(),
               request.size(), static_cast<int>(std::min<size_t>(request.size(), 4096)), request.data(),
               response.substr(0, 4096).c_str());
  std::abort();
}

// The response must be a well-formed HTTP/1.1 answer; an error (4xx, 5xx) with a body carries
// the JSON error object {"error": {"code", "message"}}, and a JSON answer parses.
void CheckResponse(std::string_view request, const std::string& response) {
  if (response.empty()) return;  // nothing to answer (no request line before the end)
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) Fail("no status line", request, response);
  int status = std::atoi(response.substr(9, 3).c_str());
  if (status < 100 || status > 599) Fail("bad status code", request, response);
  size_t head_end = response.find("\r\n\r\n");
  if (head_end == std::string::npos) Fail("headers do not end", request, response);
  std::string head = response.substr(0, head_end);
  std::string body = response.substr(head_end + 4);
  if (body.empty()) return;  // HEAD, 204, ...
  if (head.find("\r\nContent-Encoding:") != std::string::npos) return;  // compressed
  const bool is_json = head.find("\r\nContent-Type: application/json") != std::string::npos;
  if (status >= 400) {
    if (!is_json) Fail("error answer is not JSON", request, response);
    json j = json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("error") || !j["error"].is_object() || !j["error"].contains("code") ||
        !j["error"]["code"].is_string() || !j["error"].contains("message") || !j["error"]["message"].is_string()) {
      Fail("error answer is not {\"error\": {\"code\", \"message\"}}", request, response);
    }
  } else if (is_json && json::parse(body, nullptr, false).is_discarded()) {
    Fail("JSON answer does not parse", request, response);
  }
}

}  // namespace

int FuzzHttpRequest(const uint8_t* data, size_t size) {
  if (size > kMaxFuzzInput) return 0;
  Harness& h = Get();
  std::string request(reinterpret_cast<const char*>(data), size);
  for (const auto& [placeholder, token] : h.tokens.by_placeholder) {
    for (size_t at = request.find(placeholder); at != std::string::npos; at = request.find(placeholder, at + token.size())) {
      request.replace(at, placeholder.size(), token);
    }
  }
  std::string response = h.http->ServeRaw(request);
  static const bool verbose = std::getenv("ABACUS_FUZZ_VERBOSE") != nullptr;
  if (verbose) {  // the request line → the status line and the start of the body
    std::string body = response.substr(std::min(response.size(), response.find("\r\n\r\n") + 4), 160);
    std::fprintf(stderr, "%s -> %s %s\n", request.substr(0, request.find('\r')).c_str(),
                 response.substr(0, response.find('\r')).c_str(), body.c_str());
  }
  CheckResponse(request, response);
  return 0;
}

}  // namespace abacus::fuzz

#ifdef ABACUS_FUZZ_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abacus::fuzz::FuzzHttpRequest(data, size);
}
#endif
