// Strict HTTP/1.1 request framing for the front (net/http_front.h): the request head is parsed
// line by line as bytes arrive, and the body is framed by Content-Length or decoded from chunked
// as it arrives, each against its limit, so that a request is refused as soon as its bytes show
// it is bad or too large, never after it was read whole.
//
//   RequestHeadParser head(limits);
//   switch (head.Parse(buffered)) { kNeedMore: read more; kError: answer head.error(); kDone: ... }
//   ChunkedDecoder body(limits.max_body);
//   body.Feed(rest, consumed, decoded);
//
// What is refused (and answered with Connection: close): a request line that is not
// "METHOD SP TARGET SP HTTP/1.x" (HTTP/0.9 included), an unknown method, a header line without a
// colon or with folding, more than max_headers header lines or a head over max_head_bytes (431),
// both Content-Length and Transfer-Encoding, a transfer coding other than chunked, a
// Content-Length that is not a decimal number or differs between copies (400), a body over
// max_body by its declared length or as it arrives (413), bad chunk framing (400).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace abacus::net {

struct FrameLimits {
  size_t max_head_bytes = 64 * 1024;  // request line and headers together (else 431)
  size_t max_headers = 100;           // header lines (else 431)
  size_t max_target_bytes = 8192;     // the request target (else 414)
  size_t max_body = 8 << 20;          // decoded body bytes (else 413)
};

enum class FrameState { kNeedMore, kDone, kError };

// An answer the front gives itself: the HTTP status and a message that quotes no request bytes
// beyond a short, escaped excerpt.
struct FrameError {
  int status = 0;
  std::string message;
};

struct RequestHead {
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  size_t head_bytes = 0;  // bytes from the request line through the blank line
  enum class Body { kNone, kLength, kChunked } body = Body::kNone;
  uint64_t content_length = 0;  // with Body::kLength
  bool expect_continue = false;  // "Expect: 100-continue"
};

class RequestHeadParser {
 public:
  explicit RequestHeadParser(FrameLimits limits) : limits_(limits) {}

  // Parses `data`, the bytes received since the request began (a longer view of the same bytes
  // on each call; lines already checked are not scanned again). kDone: head() is complete;
  // kError: error() says why; kNeedMore: no verdict yet.
  FrameState Parse(std::string_view data);
  const RequestHead& head() const { return head_; }
  const FrameError& error() const { return error_; }
  // Starts over for the next request on the connection.
  void Reset();

 private:
  FrameState Fail(int status, std::string message);
  FrameState RequestLine(std::string_view line);
  FrameState HeaderLine(std::string_view line);
  FrameState Finish();

  FrameLimits limits_;
  size_t pos_ = 0;  // bytes of complete lines consumed
  bool have_request_line_ = false;
  RequestHead head_;
  FrameError error_;
};

// Decodes a chunked body as it arrives; refuses it once the decoded bytes pass `max_body`.
class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(size_t max_body) : max_body_(max_body) {}
  // Consumes what it can of `in` (sets `consumed`), appending body bytes to `out`. kDone at the
  // end of the trailers (bytes after that belong to the next request).
  FrameState Feed(std::string_view in, size_t& consumed, std::string& out);
  const FrameError& error() const { return error_; }

 private:
  enum class Step { kSize, kData, kDataEnd, kTrailer, kDone };
  FrameState Fail(int status, std::string message);

  size_t max_body_;
  Step step_ = Step::kSize;
  uint64_t left_ = 0;     // data bytes left in this chunk
  uint64_t decoded_ = 0;  // body bytes so far
  size_t trailers_ = 0;
  FrameError error_;
};

// The request as httplib's parser gets it on a worker: the request line and headers as sent,
// without Content-Length, Transfer-Encoding and Expect, then "Content-Length: N" and the body.
// A form body (Content-Type: application/x-www-form-urlencoded, curl's default for -d) goes on
// as text/plain: Abacus takes no forms (its routes read YAML or JSON), and httplib would refuse
// such a body over 8 KiB and read its fields as query parameters.
std::string ForwardedRequest(const RequestHead& head, std::string_view body);

// A complete HTTP/1.1 answer with a JSON error {"error": {"code", "message"}} and
// "Connection: close".
std::string ErrorAnswer(int status, std::string_view message);

// Up to `max` bytes of `text` for a message: printable ASCII kept, other bytes as \xNN, and
// "... (N bytes)" when cut.
std::string Excerpt(std::string_view text, size_t max = 200);

// Caps an error message built for an HTTP answer: each line at 400 bytes (cut at a UTF-8
// boundary, "... (N bytes cut)"), at most 100 lines. Messages may quote request input (a YAML
// error's context line), which must not come back whole.
std::string CapAnswerText(std::string message);

}  // namespace abacus::net
