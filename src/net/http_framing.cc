#include "net/http_framing.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>

namespace abacus::net {
namespace {

constexpr std::array<std::string_view, 7> kMethods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
constexpr size_t kMaxChunkLine = 1024;  // a chunk-size line with its extensions
constexpr size_t kMaxTrailers = 100;

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Finds the next line in `data` from `from`: its end (the LF) or npos. Lines end in CRLF or LF.
size_t LineEnd(std::string_view data, size_t from) { return data.find('\n', from); }

std::string_view LineAt(std::string_view data, size_t from, size_t lf) {
  std::string_view line = data.substr(from, lf - from);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

const char* Reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

const char* CodeOf(int status) {
  switch (status) {
    case 408: return "deadline_exceeded";
    case 413: return "payload_too_large";
    case 503: return "unavailable";
    case 501:
    case 505: return "unimplemented";
    default: return "invalid_argument";
  }
}

}  // namespace

std::string Excerpt(std::string_view text, size_t max) {
  std::string out;
  size_t n = std::min(text.size(), max);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string CapAnswerText(std::string message) {
  constexpr size_t kLine = 400, kLines = 100;
  if (message.size() <= kLine && message.find('\n') == std::string::npos) return message;
  std::string out;
  size_t start = 0, lines = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    if (++lines > kLines) {
      out += "... (" + std::to_string(message.size() - start) + " bytes cut)";
      break;
    }
    size_t len = end - start;
    if (len <= kLine) {
      out.append(message, start, len);
    } else {
      size_t keep = kLine;
      // Cut before a UTF-8 continuation byte's sequence, never inside it.
      while (keep > 0 && (static_cast<unsigned char>(message[start + keep]) & 0xC0) == 0x80) --keep;
      out.append(message, start, keep);
      out += "... (" + std::to_string(len - keep) + " bytes cut)";
    }
    if (end < message.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string ErrorAnswer(int status, std::string_view message) {
  nlohmann::json body = {{"error", {{"code", CodeOf(status)}, {"message", message}}}};
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(text.size()) +
         "\r\n\r\n" + text;
}

void RequestHeadParser::Reset() {
  pos_ = 0;
  have_request_line_ = false;
  head_ = RequestHead();
  error_ = FrameError();
}

FrameState RequestHeadParser::Fail(int status, std::string message) {
  error_ = {status, std::move(message)};
  return FrameState::kError;
}

FrameState RequestHeadParser::Parse(std::string_view data) {
  for (;;) {
    size_t lf = LineEnd(data, pos_);
    if (lf == std::string_view::npos) {
      if (!have_request_line_ && data.size() - pos_ > limits_.max_target_bytes + 64) {
        return Fail(414, "request line longer than " + std::to_string(limits_.max_target_bytes + 64) + " bytes");
      }
      if (data.size() > limits_.max_head_bytes) {
        return Fail(431, "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
      }
      return FrameState::kNeedMore;
    }
    if (lf + 1 > limits_.max_head_bytes) {
      return Fail(431, "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    }
    std::string_view line = LineAt(data, pos_, lf);
    pos_ = lf + 1;
    FrameState st;
    if (!have_request_line_) {
      // RFC 9112 2.2: empty lines before the request line are ignored.
      if (line.empty()) continue;
      st = RequestLine(line);
      have_request_line_ = true;
    } else if (line.empty()) {
      head_.head_bytes = pos_;
      return Finish();
    } else {
      st = HeaderLine(line);
    }
    if (st == FrameState::kError) return st;
  }
}

FrameState RequestHeadParser::RequestLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    return Fail(400, "malformed request line '" + Excerpt(line) + "' (expected METHOD TARGET HTTP/1.1)");
  }
  std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), IsTokenChar)) {
    return Fail(400, "malformed request line '" + Excerpt(line) + "' (expected METHOD TARGET HTTP/1.1)");
  }
  if (std::find(kMethods.begin(), kMethods.end(), method) == kMethods.end()) {
    return Fail(501, "unknown method '" + Excerpt(method, 32) + "'");
  }
  if (target.size() > limits_.max_target_bytes) {
    return Fail(414, "request target longer than " + std::to_string(limits_.max_target_bytes) + " bytes");
  }
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
      })) {
    return Fail(400, "malformed request target '" + Excerpt(target) + "'");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    if (version.starts_with("HTTP/")) return Fail(505, "HTTP version '" + Excerpt(version, 16) + "' not supported");
    return Fail(400, "malformed request line '" + Excerpt(line) + "' (expected METHOD TARGET HTTP/1.1)");
  }
  head_.method = method;
  head_.target = target;
  head_.version = version;
  return FrameState::kNeedMore;
}

FrameState RequestHeadParser::HeaderLine(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    return Fail(400, "header line folding (a line starting with white space) is not allowed");
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Fail(400, "header line without a colon: '" + Excerpt(line) + "'");
  std::string_view name = line.substr(0, colon);
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
    return Fail(400, "malformed header name '" + Excerpt(name, 64) + "'");
  }
  std::string_view value = Trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
      })) {
    return Fail(400, "control character in header '" + Excerpt(name, 64) + "'");
  }
  if (head_.headers.size() >= limits_.max_headers) {
    return Fail(431, "more than " + std::to_string(limits_.max_headers) + " header lines");
  }
  head_.headers.emplace_back(name, value);
  return FrameState::kNeedMore;
}

FrameState RequestHeadParser::Finish() {
  bool has_length = false, has_coding = false;
  for (const auto& [name, value] : head_.headers) {
    if (EqualsNoCase(name, "Content-Length")) {
      // RFC 9112 6.3: digits only; copies must agree. A sign, a space or a list is refused.
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), ::isdigit)) {
        if (!value.empty() && std::all_of(value.begin(), value.end(), ::isdigit)) {
          return Fail(413, "request body of " + Excerpt(value, 32) + " bytes is larger than the limit of " +
                               std::to_string(limits_.max_body) + " bytes");
        }
        return Fail(400, "Content-Length must be a decimal number of bytes, got '" + Excerpt(value, 32) + "'");
      }
      uint64_t n = std::stoull(value);
      if (has_length && n != head_.content_length) return Fail(400, "Content-Length headers disagree");
      head_.content_length = n;
      has_length = true;
    } else if (EqualsNoCase(name, "Transfer-Encoding")) {
      if (has_coding) return Fail(400, "more than one Transfer-Encoding header");
      if (!EqualsNoCase(value, "chunked")) {
        return Fail(501, "transfer coding '" + Excerpt(value, 64) + "' not supported (only chunked)");
      }
      has_coding = true;
    } else if (EqualsNoCase(name, "Expect")) {
      if (!EqualsNoCase(value, "100-continue")) return Fail(400, "unsupported Expect '" + Excerpt(value, 64) + "'");
      head_.expect_continue = true;
    }
  }
  if (has_length && has_coding) {
    return Fail(400, "both Content-Length and Transfer-Encoding: the request's length is ambiguous");
  }
  if (has_coding && head_.version == "HTTP/1.0") return Fail(400, "chunked transfer coding in an HTTP/1.0 request");
  if (has_length && head_.content_length > limits_.max_body) {
    return Fail(413, "request body of " + std::to_string(head_.content_length) + " bytes is larger than the limit of " +
                         std::to_string(limits_.max_body) + " bytes");
  }
  head_.body = has_coding ? RequestHead::Body::kChunked
               : has_length && head_.content_length > 0 ? RequestHead::Body::kLength
                                                        : RequestHead::Body::kNone;
  return FrameState::kDone;
}

FrameState ChunkedDecoder::Fail(int status, std::string message) {
  error_ = {status, std::move(message)};
  return FrameState::kError;
}

FrameState ChunkedDecoder::Feed(std::string_view in, size_t& consumed, std::string& out) {
  size_t pos = 0;
  auto finish = [&](FrameState st) {
    consumed = pos;
    return st;
  };
  while (step_ != Step::kDone) {
    if (step_ == Step::kData) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(left_, in.size() - pos));
      if (n == 0) return finish(FrameState::kNeedMore);
      out.append(in.data() + pos, n);
      pos += n;
      left_ -= n;
      if (left_ == 0) step_ = Step::kDataEnd;
      continue;
    }
    size_t lf = in.find('\n', pos);
    if (lf == std::string_view::npos) {
      if (in.size() - pos > kMaxChunkLine) return finish(Fail(400, "chunk framing line longer than 1024 bytes"));
      return finish(FrameState::kNeedMore);
    }
    std::string_view line = LineAt(in, pos, lf);
    if (line.size() > kMaxChunkLine) return finish(Fail(400, "chunk framing line longer than 1024 bytes"));
    pos = lf + 1;
    if (step_ == Step::kDataEnd) {
      if (!line.empty()) return finish(Fail(400, "bad chunked body: chunk data longer than its size"));
      step_ = Step::kSize;
    } else if (step_ == Step::kSize) {
      std::string_view size = line.substr(0, line.find(';'));
      size = Trim(size);
      if (size.empty() || size.size() > 15 || !std::all_of(size.begin(), size.end(), ::isxdigit)) {
        return finish(Fail(400, "bad chunked body: chunk size '" + Excerpt(size, 32) + "' is not a hex number"));
      }
      uint64_t n = std::stoull(std::string(size), nullptr, 16);
      if (decoded_ + n > max_body_) {
        return finish(Fail(413, "request body larger than the limit of " + std::to_string(max_body_) + " bytes"));
      }
      decoded_ += n;
      left_ = n;
      step_ = n == 0 ? Step::kTrailer : Step::kData;
    } else {  // kTrailer: lines until an empty one
      if (line.empty()) {
        step_ = Step::kDone;
      } else if (++trailers_ > kMaxTrailers || line.find(':') == std::string_view::npos) {
        return finish(Fail(400, "bad chunked body: malformed or too many trailer lines"));
      }
    }
  }
  return finish(FrameState::kDone);
}

namespace {

// Whether a Content-Type value is application/x-www-form-urlencoded (any case, any parameters).
bool IsFormType(std::string_view value) {
  constexpr std::string_view kForm = "application/x-www-form-urlencoded";
  size_t i = value.find_first_not_of(" \t");
  if (i == std::string_view::npos || value.size() - i < kForm.size()) return false;
  std::string_view type = value.substr(i, kForm.size());
  if (!EqualsNoCase(type, kForm)) return false;
  std::string_view rest = value.substr(i + kForm.size());
  return rest.empty() || rest[0] == ';' || rest[0] == ' ' || rest[0] == '\t';
}

}  // namespace

std::string ForwardedRequest(const RequestHead& head, std::string_view body) {
  std::string out;
  out.reserve(head.head_bytes + body.size() + 32);
  out += head.method;
  out += ' ';
  out += head.target;
  out += ' ';
  out += head.version;
  out += "\r\n";
  for (const auto& [name, value] : head.headers) {
    if (EqualsNoCase(name, "Content-Length") || EqualsNoCase(name, "Transfer-Encoding") || EqualsNoCase(name, "Expect")) {
      continue;
    }
    out += name;
    out += ": ";
    out += EqualsNoCase(name, "Content-Type") && IsFormType(value) ? std::string_view("text/plain") : std::string_view(value);
    out += "\r\n";
  }
  if (!body.empty() || head.body != RequestHead::Body::kNone) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

}  // namespace abacus::net
