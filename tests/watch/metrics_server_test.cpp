// The Prometheus endpoint, scraped over a real socket.
#include "watch/metrics_server.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http_client.h"

namespace sparkdoc::watch {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Polls `condition` every millisecond for up to `bound`, which is generous: the tests run on a
// loaded machine, and the conditions hold within milliseconds when the server is right.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds bound = 5s) {
  const auto end = Clock::now() + bound;
  while (!condition()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

size_t open_descriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

// `bytes` of exposition lines.
std::string exposition(size_t bytes) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) text += fmt::format("x{{i=\"{}\"}} 1\n", i);
  return text;
}

// A client that sends a request head one byte every `period` and never finishes it.
class Slowloris {
 public:
  Slowloris(uint16_t port, std::chrono::milliseconds period) : fd_(connect_loopback(port)) {
    thread_ = std::thread([this, period] {
      const std::string head =
          "GET /metrics HTTP/1.1\r\nHost: localhost\r\nUser-Agent: " + std::string(1000, 's');
      std::unique_lock lock(mutex_);
      for (char byte : head) {
        ::send(fd_, &byte, 1, MSG_NOSIGNAL);
        ++sent_;
        if (stopped_.wait_for(lock, period, [this] { return stop_; })) return;
      }
    });
  }
  ~Slowloris() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    stopped_.notify_one();
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  Slowloris(const Slowloris&) = delete;
  Slowloris& operator=(const Slowloris&) = delete;
  int fd() const { return fd_; }
  size_t sent() const { return sent_.load(); }

 private:
  int fd_;
  std::atomic<size_t> sent_{0};
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;
};

TEST(MetricsServer, ServesTheLatestExpositionOverASocket) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");
  (*server)->publish("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 45\n");
  std::string reply =
      exchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(reply, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(reply, HasSubstr("Content-Length: 33\r\n"));
  EXPECT_THAT(reply, EndsWith("\r\n\r\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 45\n"));
  (*server)->publish("x 2\n");
  EXPECT_THAT(exchange(port, "GET /metrics?name[]=x HTTP/1.0\r\n\r\n"), EndsWith("\r\n\r\nx 2\n"));
  EXPECT_THAT(exchange(port, "GET /other HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(exchange(port, "garbage\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  std::string head = exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, EndsWith("\r\n\r\n"));
}

// What is published is rendered when a scraper asks, once per request, not when published.
TEST(MetricsServer, RendersOnlyWhenScraped) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  auto renders = std::make_shared<std::atomic<int>>(0);
  (*server)->publish([renders] { return "x " + std::to_string(++*renders) + "\n"; });
  EXPECT_EQ(renders->load(), 0);
  const uint16_t port = (*server)->port();
  EXPECT_THAT(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), EndsWith("x 1\n"));
  EXPECT_THAT(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), EndsWith("x 2\n"));
  EXPECT_EQ(renders->load(), 2);
}

// Issue 21 item 9: served one connection at a time, 5 idle connections delayed a scrape by
// 9.95 s (Prometheus gives up at 10 s), and 50 idle ones and a slowloris by 33.7 s once the
// listen queue was full. Served together, the scrape waits for none of them; they are held well
// within the 2 s in use while it runs.
TEST(MetricsServer, AScrapeBesideFiftyIdleClientsAndASlowlorisIsAnsweredAtOnce) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  MetricsServer& endpoint = **server;
  // About the size of the H200's exposition (10,213 bytes in
  // docs/measurements/2026-11-30-h200-watch-150s-before.txt).
  const std::string metrics = exposition(10'000);
  endpoint.publish(metrics);
  const uint16_t port = endpoint.port();
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(connect_loopback(port));
    ASSERT_GE(idle.back(), 0);
  }
  {
    Slowloris slowloris(port, 100ms);
    ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == 51 && slowloris.sent() >= 2; }));
    std::vector<double> ms;
    for (int i = 0; i < 20; ++i) {
      auto start = Clock::now();
      std::string reply = exchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
      ms.push_back(ms_since(start));
      EXPECT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
      EXPECT_THAT(reply, EndsWith("\r\n\r\n" + metrics));
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "scrape beside 50 idle clients and a slowloris: median %.2f ms, max %.2f ms of %zu\n",
        ms[ms.size() / 2], ms.back(), ms.size());
    EXPECT_LT(ms.back(), 500.0);
    EXPECT_EQ(endpoint.open_clients(), 51u);
  }
  for (int fd : idle) ::close(fd);
  EXPECT_TRUE(eventually([&] { return endpoint.open_clients() == 0; }));
}

// Nothing is kept once a connection closes: the server's count of clients and the process's
// descriptors return to where they were, and each request was rendered once.
TEST(MetricsServer, AThousandSequentialAndFiftyConcurrentRequestsAreAnsweredAndLeaveNothing) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  MetricsServer& endpoint = **server;
  auto renders = std::make_shared<std::atomic<int>>(0);
  endpoint.publish([renders] {
    ++*renders;
    return std::string("x 1\n");
  });
  const uint16_t port = endpoint.port();
  const size_t descriptors = open_descriptors();
  auto answered = [](const std::string& reply) {
    return reply.starts_with("HTTP/1.1 200 OK\r\n") && reply.ends_with("\r\n\r\nx 1\n");
  };
  int sequential = 0;
  for (int i = 0; i < 1000; ++i) {
    sequential += answered(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"));
  }
  EXPECT_EQ(sequential, 1000);
  EXPECT_EQ(endpoint.open_clients(), 0u);

  std::vector<int> clients;
  for (int i = 0; i < 50; ++i) {
    clients.push_back(connect_loopback(port));
    ASSERT_GE(clients.back(), 0);
  }
  ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == 50; }));
  for (int fd : clients) EXPECT_TRUE(send_all(fd, "GET /metrics HTTP/1.1\r\n\r\n"));
  int concurrent = 0;
  for (int fd : clients) {
    concurrent += answered(read_to_end(fd));
    ::close(fd);
  }
  EXPECT_EQ(concurrent, 50);
  EXPECT_EQ(renders->load(), 1050);
  EXPECT_EQ(endpoint.open_clients(), 0u);
  EXPECT_EQ(open_descriptors(), descriptors);
}

// A client that sends nothing, one that sends its head a byte at a time and never finishes it,
// and one that asks but never reads its answer each lose their connection at the limit counted
// from their accept (a trickle of bytes does not extend it), and a scrape beside them is
// answered while they still hold theirs.
TEST(MetricsServer, StalledClientsLoseTheirConnectionsAtTheLimitWithoutDelayingAScrape) {
  // The limit is 2 s in use; 500 ms shows the same without the test waiting long, and still
  // leaves a loaded machine ample time to answer the scrape before it.
  constexpr auto kLimit = 500ms;
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0}, kLimit);
  ASSERT_TRUE(server) << server.error().message;
  MetricsServer& endpoint = **server;
  // The first answer (the never-reader's) is larger than the kernel's buffers on both sides
  // (tcp_wmem's 4 MiB at most, and a 4 kB receive buffer: 2.8 MB of it arrived here), so its
  // sending cannot finish.
  constexpr size_t kLarge = size_t{16} << 20;
  auto renders = std::make_shared<std::atomic<int>>(0);
  endpoint.publish(
      [renders] { return ++*renders == 1 ? std::string(kLarge, 'x') : std::string("x 1\n"); });
  const uint16_t port = endpoint.port();

  const auto start = Clock::now();
  int never_reads = connect_loopback(port, 4096);
  ASSERT_GE(never_reads, 0);
  ASSERT_TRUE(send_all(never_reads, "GET /metrics HTTP/1.1\r\n\r\n"));
  int silent = connect_loopback(port);
  ASSERT_GE(silent, 0);
  Slowloris slowloris(port, 50ms);
  ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == 3; }));
  // Its answer has begun to arrive: rendered, and being sent as its window allows.
  pollfd arriving{never_reads, POLLIN, 0};
  ASSERT_EQ(::poll(&arriving, 1, 5000), 1);
  EXPECT_EQ(renders->load(), 1);
  auto scrape_start = Clock::now();
  EXPECT_THAT(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), EndsWith("\r\n\r\nx 1\n"));
  const double scrape_ms = ms_since(scrape_start);
  EXPECT_EQ(endpoint.open_clients(), 3u);

  ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == 0; }));
  const double closed_ms = ms_since(start);
  std::printf(
      "scrape beside three stalled clients: %.2f ms; they were closed %.0f ms after "
      "connecting (limit %lld ms)\n",
      scrape_ms, closed_ms, static_cast<long long>(kLimit.count()));
  EXPECT_GE(closed_ms, static_cast<double>(kLimit.count()));
  EXPECT_LT(closed_ms, static_cast<double>(kLimit.count()) + 1000.0);
  EXPECT_EQ(read_to_end(silent), "");
  EXPECT_EQ(read_to_end(slowloris.fd()), "");
  std::string cut = read_to_end(never_reads);
  EXPECT_THAT(cut, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_LT(cut.size(), kLarge) << "the kernel buffered the whole answer: make it larger";
  ::close(silent);
  ::close(never_reads);
}

// At the cap the listening socket waits: a connection beyond it is neither refused nor
// accepted, and a scrape is answered as soon as a slot frees.
TEST(MetricsServer, BeyondTheCapAScrapeIsAnsweredOnceASlotFrees) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  MetricsServer& endpoint = **server;
  endpoint.publish("x 1\n");
  const uint16_t port = endpoint.port();
  std::vector<int> held;
  for (size_t i = 0; i < MetricsServer::kMaxClients; ++i) {
    held.push_back(connect_loopback(port));
    ASSERT_GE(held.back(), 0);
  }
  ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == MetricsServer::kMaxClients; }));
  int scrape = connect_loopback(port);
  ASSERT_GE(scrape, 0);
  ASSERT_TRUE(send_all(scrape, "GET /metrics HTTP/1.1\r\n\r\n"));
  std::vector<int> queued;
  for (int i = 0; i < 10; ++i) {
    queued.push_back(connect_loopback(port));
    ASSERT_GE(queued.back(), 0);
  }
  pollfd answer{scrape, POLLIN, 0};
  EXPECT_EQ(::poll(&answer, 1, 50), 0) << "answered while every slot was held";
  EXPECT_EQ(endpoint.open_clients(), MetricsServer::kMaxClients);

  auto freed = Clock::now();
  ::close(held.front());
  held.erase(held.begin());
  EXPECT_THAT(read_to_end(scrape), EndsWith("\r\n\r\nx 1\n"));
  const double scrape_ms = ms_since(freed);
  ::close(scrape);
  std::printf("scrape beyond the cap: answered %.2f ms after a slot freed\n", scrape_ms);
  EXPECT_LT(scrape_ms, 500.0);
  // The slot it took and gave back goes to the next in the queue: the server holds the cap.
  ASSERT_TRUE(eventually([&] { return endpoint.open_clients() == MetricsServer::kMaxClients; }));
  for (int fd : held) ::close(fd);
  for (int fd : queued) ::close(fd);
  EXPECT_TRUE(eventually([&] { return endpoint.open_clients() == 0; }));
}

// The blank line that ends a head may straddle two reads, and a head without one is answered
// from its first kMaxHead (8 kB) bytes rather than read further.
TEST(MetricsServer, AHeadIsReadAByteAtATimeAndToEightKilobytesAtMost) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  (*server)->publish("x 1\n");
  const uint16_t port = (*server)->port();
  for (std::string_view head : {"GET /metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.0\n\n"}) {
    int fd = connect_loopback(port);
    ASSERT_GE(fd, 0);
    for (char byte : head) {
      ASSERT_TRUE(send_all(fd, std::string_view(&byte, 1)));
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_THAT(read_to_end(fd), EndsWith("\r\n\r\nx 1\n")) << head;
    ::close(fd);
  }
  std::string unended = "GET /metrics HTTP/1.1\r\nX-Padding: ";
  unended.resize(8192, 'p');
  EXPECT_THAT(watch::exchange(port, unended), EndsWith("\r\n\r\nx 1\n"));
}

// `printf 'GET /metrics HTTP/1.0\r\n' | nc`: a client that ends its sending before its blank
// line is answered what it sent; one that leaves without a byte costs no render.
TEST(MetricsServer, AClientThatEndsItsSendingIsAnsweredWhatItSent) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  auto renders = std::make_shared<std::atomic<int>>(0);
  (*server)->publish([renders] { return "x " + std::to_string(++*renders) + "\n"; });
  const uint16_t port = (*server)->port();
  int fd = connect_loopback(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "GET /metrics HTTP/1.0\r\n"));
  ::shutdown(fd, SHUT_WR);
  EXPECT_THAT(read_to_end(fd), EndsWith("\r\n\r\nx 1\n"));
  ::close(fd);
  ::close(connect_loopback(port));
  EXPECT_TRUE(eventually([&] { return (*server)->open_clients() == 0; }));
  EXPECT_EQ(renders->load(), 1);
}

TEST(MetricsServer, AnAddressInUseIsAnError) {
  auto first = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(first);
  auto second = MetricsServer::start(ListenAddress{"127.0.0.1", (*first)->port()});
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message, HasSubstr("cannot listen on 127.0.0.1:"));
}

TEST(ListenAddress, Forms) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9400").value(), (ListenAddress{"127.0.0.1", 9400}));
  EXPECT_EQ(parse_listen_address(":9400").value(), (ListenAddress{"", 9400}));
  EXPECT_EQ(parse_listen_address("[::1]:9400").value(), (ListenAddress{"::1", 9400}));
  EXPECT_EQ(parse_listen_address("localhost:0").value(), (ListenAddress{"localhost", 0}));
  for (const char* bad :
       {"", "9400", "host:", "host:port", "host:65536", "[::1]9400", "[::1:9400", "host:-1"}) {
    EXPECT_FALSE(parse_listen_address(bad)) << bad;
  }
}

TEST(RequestLine, Forms) {
  EXPECT_EQ(parse_request_line("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").value(),
            (HttpRequest{"GET", "/metrics"}));
  EXPECT_EQ(parse_request_line("GET /metrics?a=b HTTP/1.0\n\n").value(),
            (HttpRequest{"GET", "/metrics"}));
  for (const char* bad :
       {"", "GET /metrics HTTP/1.1", "GET /metrics\r\n", "GET metrics HTTP/1.1\r\n",
        "GET /metrics HTTP/2\r\n", "GET  /metrics HTTP/1.1\r\n"}) {
    EXPECT_FALSE(parse_request_line(bad)) << bad;
  }
}

}  // namespace
}  // namespace sparkdoc::watch
