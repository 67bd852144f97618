#include "net/http_framing.h"

#include <gtest/gtest.h>

#include <vector>

namespace abacus::net {
namespace {

FrameLimits Limits() {
  FrameLimits l;
  l.max_body = 1 << 20;
  return l;
}

// Parses `text` whole; returns the state with the parser left for inspection.
FrameState ParseAll(RequestHeadParser& p, std::string_view text) { return p.Parse(text); }

TEST(RequestHeadParserTest, ParsesAHeadFedByteByByte) {
  std::string text = "POST /api/v1/workloads?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  RequestHeadParser p(Limits());
  FrameState st = FrameState::kNeedMore;
  size_t i = 0;
  for (; i < text.size() && st == FrameState::kNeedMore; ++i) st = p.Parse(std::string_view(text).substr(0, i + 1));
  ASSERT_EQ(st, FrameState::kDone);
  EXPECT_EQ(i, text.size() - 5);  // done at the blank line, before the body
  EXPECT_EQ(p.head().method, "POST");
  EXPECT_EQ(p.head().target, "/api/v1/workloads?x=1");
  EXPECT_EQ(p.head().body, RequestHead::Body::kLength);
  EXPECT_EQ(p.head().content_length, 5u);
  EXPECT_EQ(p.head().head_bytes, text.size() - 5);
}

struct Refusal {
  const char* name;
  std::string request;
  int status;
  const char* says;
};

TEST(RequestHeadParserTest, RefusesBrokenAndAmbiguousHeads) {
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  const Refusal cases[] = {
      {"CL+TE", "POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length"},
      {"HTTP/0.9", "GET /\r\n", 400, "malformed request line"},
      {"unknown method", "BREW /pot HTTP/1.1\r\n", 501, "unknown method 'BREW'"},
      {"no colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", 400, "without a colon"},
      {"folding", "GET / HTTP/1.1\r\nHost: a\r\n  b\r\n\r\n", 400, "folding"},
      {"negative length", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "decimal number"},
      {"huge length", "POST / HTTP/1.1\r\nContent-Length: 1000000000000000\r\n\r\n", 413, "larger than the limit"},
      {"very huge length", "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, "larger"},
      {"lengths disagree", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "disagree"},
      {"gzip coding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "not supported"},
      {"version", "GET / HTTP/2.0\r\n", 505, "not supported"},
      {"too many headers", many, 431, "more than 100 header lines"},
      {"head too large", "GET / HTTP/1.1\r\nX: " + std::string(70000, 'a'), 431, "larger than"},
  };
  for (const Refusal& c : cases) {
    RequestHeadParser p(Limits());
    EXPECT_EQ(ParseAll(p, c.request), FrameState::kError) << c.name;
    EXPECT_EQ(p.error().status, c.status) << c.name;
    EXPECT_NE(p.error().message.find(c.says), std::string::npos) << c.name << ": " << p.error().message;
  }
}

TEST(RequestHeadParserTest, AnErrorQuotesAtMostAShortEscapedExcerpt) {
  RequestHeadParser p(Limits());
  std::string line = "GET / HTTP/1.1\r\n" + std::string(5000, '\x01') + "\r\n\r\n";
  ASSERT_EQ(p.Parse(line), FrameState::kError);
  EXPECT_LT(p.error().message.size(), 1200u);
  EXPECT_EQ(p.error().message.find('\x01'), std::string::npos);
}

TEST(ChunkedDecoderTest, DecodesPiecesAndStopsAtTheEnd) {
  std::string body = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  ChunkedDecoder d(1 << 20);
  std::string out;
  size_t pos = 0;
  FrameState st = FrameState::kNeedMore;
  // Fed a byte at a time: what is consumed never has to be offered again.
  std::string pending;
  for (char c : body) {
    if (st != FrameState::kNeedMore) break;
    pending += c;
    size_t consumed = 0;
    st = d.Feed(pending, consumed, out);
    pending.erase(0, consumed);
    pos += consumed;
  }
  ASSERT_EQ(st, FrameState::kDone);
  EXPECT_EQ(out, "hello world");
  EXPECT_EQ(body.substr(pos), "NEXT");  // the next request's bytes are left alone
}

TEST(ChunkedDecoderTest, RefusesABodyPastTheLimitAsItArrives) {
  ChunkedDecoder d(1000);
  std::string out;
  size_t consumed = 0;
  std::string first = "200\r\n" + std::string(512, 'a') + "\r\n";
  ASSERT_EQ(d.Feed(first, consumed, out), FrameState::kNeedMore);
  // The second chunk's size line alone is enough: 512 + 512 > 1000, its data is never read.
  ASSERT_EQ(d.Feed("200\r\n", consumed, out), FrameState::kError);
  EXPECT_EQ(d.error().status, 413);
  EXPECT_EQ(out.size(), 512u);
}

TEST(ChunkedDecoderTest, RefusesBadFraming) {
  for (const std::string& bad : std::vector<std::string>{"zz\r\n", "5\r\nhelloXX\r\n", "10000000000000000\r\n", std::string(2000, '1')}) {
    ChunkedDecoder d(1 << 20);
    std::string out;
    size_t consumed = 0;
    EXPECT_EQ(d.Feed(bad, consumed, out), FrameState::kError) << bad.substr(0, 40);
    EXPECT_EQ(d.error().status, 400);
  }
}

TEST(ForwardedRequestTest, CarriesTheDecodedBodyWithItsLength) {
  RequestHeadParser p(Limits());
  ASSERT_EQ(p.Parse("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"),
            FrameState::kDone);
  EXPECT_EQ(ForwardedRequest(p.head(), "hello"), "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
}

TEST(ForwardedRequestTest, AFormContentTypeGoesOnAsPlainText) {
  RequestHeadParser p(Limits());
  ASSERT_EQ(p.Parse("POST /x HTTP/1.1\r\ncontent-type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\n"),
            FrameState::kDone);
  EXPECT_EQ(ForwardedRequest(p.head(), "a=1"), "POST /x HTTP/1.1\r\ncontent-type: text/plain\r\nContent-Length: 3\r\n\r\na=1");
  RequestHeadParser yaml(Limits());
  ASSERT_EQ(yaml.Parse("POST /x HTTP/1.1\r\nContent-Type: application/yaml\r\nContent-Length: 3\r\n\r\n"), FrameState::kDone);
  EXPECT_NE(ForwardedRequest(yaml.head(), "a: 1").find("Content-Type: application/yaml"), std::string::npos);
  RequestHeadParser lookalike(Limits());
  ASSERT_EQ(lookalike.Parse("POST /x HTTP/1.1\r\nContent-Type: application/x-www-form-urlencodedx\r\n\r\n"),
            FrameState::kDone);
  EXPECT_NE(ForwardedRequest(lookalike.head(), "").find("urlencodedx"), std::string::npos);
}

TEST(CapAnswerTextTest, CutsLongLinesAndKeepsShortOnes) {
  EXPECT_EQ(CapAnswerText("short"), "short");
  std::string capped = CapAnswerText("request:1:1: bad value '" + std::string(20 << 20, 'x') + "'\nnext line");
  EXPECT_LT(capped.size(), 500u);
  EXPECT_NE(capped.find("bytes cut)\nnext line"), std::string::npos) << capped.substr(0, 400);
}

TEST(ErrorAnswerTest, IsACompleteAnswerThatCloses) {
  std::string a = ErrorAnswer(413, "too large");
  EXPECT_TRUE(a.starts_with("HTTP/1.1 413 Payload Too Large\r\n"));
  EXPECT_NE(a.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(a.find(R"({"error":{"code":"payload_too_large","message":"too large"}})"), std::string::npos);
}

}  // namespace
}  // namespace abacus::net
