// A minimal HTTP server for the Prometheus endpoint: GET /metrics answers the latest
// exposition, anything else a short error. One thread, one connection at a time, "Connection:
// close" on every answer, and a 2 s limit on each request so that a stalled client cannot keep
// the endpoint; enough for a scraper and curl, and no dependency beyond the C library.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "core/result.h"
#include "watch/http.h"

namespace sparkdoc::watch {

class MetricsServer {
 public:
  // Binds and listens, then serves on a thread of its own; each request must arrive within
  // `request_limit`. Errors name the address and the system's reason ("cannot listen on
  // 127.0.0.1:9400: Address already in use").
  static Result<std::unique_ptr<MetricsServer>> start(
      const ListenAddress& address,
      std::chrono::milliseconds request_limit = std::chrono::milliseconds(2000));
  ~MetricsServer();  // stops the thread and closes the socket
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // What the endpoint serves, rendered when a scraper asks rather than at every sample: a
  // watch at 1 Hz is scraped every 15-60 s. Called on the server's thread, one request at a
  // time; it must own what it renders.
  using Render = std::function<std::string()>;

  // Replaces what is served from now on. Thread-safe.
  void publish(Render render);
  void publish(std::string metrics);  // a fixed text
  // The port bound (the one chosen when 0 was asked).
  uint16_t port() const { return port_; }
  // "http://127.0.0.1:9400/metrics".
  std::string url() const;

 private:
  MetricsServer() = default;
  void serve();
  void answer(int client);

  int listen_fd_ = -1;
  int wake_read_ = -1;
  int wake_write_ = -1;
  uint16_t port_ = 0;
  std::chrono::milliseconds request_limit_{2000};
  std::string host_;
  std::mutex mutex_;
  Render render_;
  std::thread thread_;
};

}  // namespace sparkdoc::watch
