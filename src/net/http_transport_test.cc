#include "net/http_transport.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include "net/loopback_server_test_util.h"
#include "net/socket_stream.h"

namespace abacus::net {
namespace {

using namespace std::chrono_literals;

// A connected pair of stream sockets; the test reads and writes the peer end by hand.
struct Pair {
  int fds[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~Pair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  // What the peer can read right now (empty when nothing is there).
  std::string PeerReadNow() const {
    char buf[4096];
    ssize_t n = ::recv(fds[1], buf, sizeof(buf), MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
};

TEST(SocketStreamTest, HeldWritesLeaveTogetherAtFlush) {
  Pair p;
  SocketStream strm(p.fds[0], {});
  EXPECT_EQ(strm.write("HTTP/1.1 200 OK\r\n\r\n", 19), 19);
  EXPECT_EQ(strm.write("body", 4), 4);
  EXPECT_EQ(p.PeerReadNow(), "");  // nothing left yet
  ASSERT_TRUE(strm.Flush());
  EXPECT_EQ(p.PeerReadNow(), "HTTP/1.1 200 OK\r\n\r\nbody");  // one recv: one piece
  EXPECT_TRUE(strm.Flush());  // nothing held: a no-op
}

TEST(SocketStreamTest, AReadSendsWhatIsHeldFirst) {
  Pair p;
  SocketStream strm(p.fds[0], {});
  std::thread peer([&] {
    char buf[64];
    ssize_t n = ::recv(p.fds[1], buf, sizeof(buf), 0);  // blocks until the request arrives
    std::string got(buf, n > 0 ? static_cast<size_t>(n) : 0);
    std::string answer = got == "request" ? "answer" : "wrong:" + got;
    ::send(p.fds[1], answer.data(), answer.size(), 0);
  });
  strm.write("request", 7);
  char buf[64];
  ssize_t n = strm.read(buf, sizeof(buf));
  peer.join();
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "answer");
}

TEST(SocketStreamTest, SmallReadsComeFromOneReceive) {
  Pair p;
  SocketStream strm(p.fds[0], {});
  ::send(p.fds[1], "GET / HTTP/1.1\r\n", 16, 0);
  std::string line;
  char c;
  while (line.size() < 16 && strm.read(&c, 1) == 1) line += c;
  EXPECT_EQ(line, "GET / HTTP/1.1\r\n");
  EXPECT_FALSE(strm.HasBuffered());
  ::send(p.fds[1], "xy", 2, 0);
  EXPECT_EQ(strm.WaitReadable(1000ms), 1);
  EXPECT_EQ(strm.read(&c, 1), 1);
  EXPECT_TRUE(strm.HasBuffered());  // 'y' waits in the buffer
  EXPECT_EQ(strm.WaitReadable(0ms), 1);
}

TEST(SocketStreamTest, ReadsReportTimeoutAndClose) {
  Pair p;
  SocketStream strm(p.fds[0], {.read = 20ms, .write = 20ms});
  char buf[8];
  EXPECT_EQ(strm.read(buf, sizeof(buf)), -1);  // nothing within the read timeout
  EXPECT_FALSE(strm.is_readable());
  ::shutdown(p.fds[1], SHUT_WR);
  EXPECT_EQ(strm.read(buf, sizeof(buf)), 0);  // the peer closed
}

TEST(SocketStreamTest, LargeWritesGoStraightOutAndAllArrive) {
  Pair p;
  SocketStream strm(p.fds[0], {});
  std::string big(300 * 1024, 'x');
  big[0] = 'a';
  big.back() = 'z';
  std::string received;
  std::thread peer([&] {
    char buf[65536];
    while (received.size() < big.size() + 4) {
      ssize_t n = ::recv(p.fds[1], buf, sizeof(buf), 0);
      if (n <= 0) break;
      received.append(buf, static_cast<size_t>(n));
    }
  });
  EXPECT_EQ(strm.write("head", 4), 4);
  EXPECT_EQ(strm.write(big.data(), big.size()), static_cast<ssize_t>(big.size()));
  EXPECT_TRUE(strm.Flush());
  peer.join();
  EXPECT_EQ(received, "head" + big);
}

TEST(SocketStreamTest, AFailedSendIsReportedWithoutSigpipe) {
  Pair p;
  SocketStream strm(p.fds[0], {.read = 20ms, .write = 20ms});
  ::close(p.fds[1]);
  p.fds[1] = -1;
  strm.write("lost", 4);
  EXPECT_FALSE(strm.Flush());
  EXPECT_FALSE(strm.is_writable());
  EXPECT_EQ(strm.write("more", 4), -1);
}

TEST(ServerUrlTest, ParsesHostsPortsAndSchemes) {
  auto a = ParseServerUrl("http://127.0.0.1:8420");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->tls);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8420);
  auto b = ParseServerUrl("https://abacus.example/api");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->tls);
  EXPECT_EQ(b->host, "abacus.example");
  EXPECT_EQ(b->port, 443);
  auto c = ParseServerUrl("http://[::1]:9000");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 9000);
  EXPECT_EQ(ParseServerUrl("http://localhost")->port, 80);
  for (const char* bad : {"ftp://x", "http://", "http://h:0", "http://h:99999", "http://h:8x", "http://[::1"}) {
    auto r = ParseServerUrl(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("expected http://HOST:PORT"), std::string::npos);
    }
  }
}

// A BufferedServer on a free loopback port, serving on its own thread.
class ServedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    svr_.Get("/hello", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("hello from port " + std::to_string(req.remote_port), "text/plain");
    });
    svr_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    svr_.set_keep_alive_timeout(1);
    svr_.set_keep_alive_max_count(1000);  // httplib's default (5) would end each connection early
    port_ = served_.Start();
    ASSERT_GT(port_, 0);
  }
  // A raw TCP connection to the server.
  int Connect() const {
    int fd = ConnectLoopback(port_);
    EXPECT_GE(fd, 0);
    return fd;
  }

  LoopbackServer served_;
  BufferedServer& svr_ = served_.server();
  int port_ = 0;
};

TEST_F(ServedTest, AClientKeepsOneConnectionForManyRequests) {
  BufferedClient client("127.0.0.1", port_);
  client.set_keep_alive(true);
  std::set<std::string> answers;
  for (int i = 0; i < 50; ++i) {
    auto r = client.Get("/hello");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    answers.insert(r->body);
    std::string body = "payload-" + std::to_string(i) + std::string(static_cast<size_t>(i) * 1000, '.');
    auto e = client.Post("/echo", body, "text/plain");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->body, body);
  }
  EXPECT_EQ(answers.size(), 1u);  // every answer came over the same client port
}

TEST_F(ServedTest, PipelinedRequestsAreAnsweredInOrder) {
  int fd = Connect();
  std::string two = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst"
                    "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nsecond";
  ASSERT_EQ(::send(fd, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
  std::string got = ReadUntil(fd, "HTTP/1.1 200", 2);
  ::close(fd);
  size_t first = got.find("first"), second = got.find("second");
  ASSERT_NE(first, std::string::npos) << got;
  ASSERT_NE(second, std::string::npos) << got;
  EXPECT_LT(first, second);
}

TEST_F(ServedTest, ExpectContinueGetsItsInterimAnswerBeforeTheBody) {
  int fd = Connect();
  std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n";
  ::send(fd, head.data(), head.size(), 0);
  std::string interim = ReadUntil(fd, "100 Continue", 1);
  EXPECT_NE(interim.find("HTTP/1.1 100 Continue"), std::string::npos) << interim;
  ::send(fd, "body", 4, 0);
  std::string answer = ReadUntil(fd, "body", 1);
  ::close(fd);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
}

TEST_F(ServedTest, AnIdleConnectionIsClosedAfterTheKeepAliveTimeout) {
  int fd = Connect();
  char c;
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1);     // the server hangs up (keep-alive timeout: 1 s)
  EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
  ::close(fd);
}

TEST_F(ServedTest, StopReturnsWhileConnectionsIdle) {
  std::vector<int> fds;
  for (int i = 0; i < 8; ++i) fds.push_back(Connect());
  BufferedClient client("127.0.0.1", port_);
  ASSERT_TRUE(client.Get("/hello"));
  served_.Stop();  // returns: idle connections notice the stop within their next poll
  for (int fd : fds) ::close(fd);
}

TEST_F(ServedTest, TheListenBacklogIsWidened) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  ASSERT_EQ(::getsockopt(ListenSocketOf(svr_), IPPROTO_TCP, TCP_INFO, &info, &len), 0);
  // For a listening socket Linux reports the backlog in tcpi_sacked (capped by somaxconn).
  EXPECT_GT(info.tcpi_sacked, 5u);
}

}  // namespace
}  // namespace abacus::net
