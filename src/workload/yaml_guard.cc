#include "workload/yaml_guard.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

namespace abacus {
namespace {

// Records whether a document held nothing but a null root, and where.
class RootRecorder final : public YAML::EventHandler {
 public:
  void Reset() {
    events_ = 0;
    null_root_ = false;
  }
  bool null_only() const { return events_ == 1 && null_root_; }
  const YAML::Mark& mark() const { return mark_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    if (events_++ == 0) {
      null_root_ = true;
      mark_ = mark;
    }
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { ++events_; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { ++events_; }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    ++events_;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    ++events_;
  }
  void OnMapEnd() override {}

 private:
  int events_ = 0;
  bool null_root_ = false;
  YAML::Mark mark_;
};

}  // namespace

std::optional<int> FindYamlLoadAllLoop(std::string_view text) {
  std::stringstream in{std::string(text)};
  RootRecorder recorder;
  std::optional<YAML::Mark> previous_null;
  // Every real document consumes at least one byte, so more documents than bytes means a loop.
  const size_t max_documents = text.size() + 2;
  try {
    YAML::Parser parser(in);
    for (size_t n = 0;; ++n) {
      recorder.Reset();
      if (!parser.HandleNextDocument(recorder)) return std::nullopt;
      if (n > max_documents) return recorder.mark().line + 1;
      if (!recorder.null_only()) {
        previous_null.reset();
        continue;
      }
      const YAML::Mark& m = recorder.mark();
      if (previous_null && previous_null->pos == m.pos) return m.line + 1;
      previous_null = m;
    }
  } catch (const YAML::Exception&) {
    return std::nullopt;  // a syntax error: the real parse reports it
  }
}

}  // namespace abacus
