// The Prometheus endpoint, scraped over a real socket.
#include "watch/metrics_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "http_client.h"

namespace sparkdoc::watch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

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
  EXPECT_THAT(reply, ::testing::EndsWith("\r\n\r\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 45\n"));
  (*server)->publish("x 2\n");
  EXPECT_THAT(exchange(port, "GET /metrics?name[]=x HTTP/1.0\r\n\r\n"),
              ::testing::EndsWith("\r\n\r\nx 2\n"));
  EXPECT_THAT(exchange(port, "GET /other HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(exchange(port, "garbage\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  std::string head = exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, ::testing::EndsWith("\r\n\r\n"));
}

// What is published is rendered when a scraper asks, once per request, not when published.
TEST(MetricsServer, RendersOnlyWhenScraped) {
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0});
  ASSERT_TRUE(server) << server.error().message;
  auto renders = std::make_shared<std::atomic<int>>(0);
  (*server)->publish([renders] { return "x " + std::to_string(++*renders) + "\n"; });
  EXPECT_EQ(renders->load(), 0);
  const uint16_t port = (*server)->port();
  EXPECT_THAT(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), ::testing::EndsWith("x 1\n"));
  EXPECT_THAT(exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), ::testing::EndsWith("x 2\n"));
  EXPECT_EQ(renders->load(), 2);
}

TEST(MetricsServer, AClientThatSendsNothingDoesNotKeepTheEndpoint) {
  // The limit is 2 s in use; 100 ms shows the same without the test waiting.
  auto server = MetricsServer::start(ListenAddress{"127.0.0.1", 0}, std::chrono::milliseconds(100));
  ASSERT_TRUE(server) << server.error().message;
  (*server)->publish("x 1\n");
  int idle = connect_loopback((*server)->port());
  ASSERT_GE(idle, 0);
  // Served once the idle client's time runs out.
  EXPECT_THAT(exchange((*server)->port(), "GET /metrics HTTP/1.1\r\n\r\n"),
              ::testing::EndsWith("x 1\n"));
  ::close(idle);
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
