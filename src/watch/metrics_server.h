// A minimal HTTP server for the Prometheus endpoint: GET /metrics answers the latest
// exposition, anything else a short error. One thread serves every open connection from one
// poll() loop over non-blocking sockets, "Connection: close" on every answer, and each
// connection has a limit counted from its accept (2 s in use): a client that sends nothing, sends
// its head a byte at a time or never reads its answer holds only its own connection, and only
// until its limit, while a scrape beside it is answered at once. Enough for a scraper and curl,
// and no dependency beyond the C library.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
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
  // At most this many connections are open at once; further ones wait in the kernel's listen
  // queue (as long again) until one closes.
  static constexpr size_t kMaxClients = 64;

  // Binds and listens, then serves on a thread of its own; each connection must have sent its
  // request and taken its answer within `request_limit` of being accepted, or it is closed.
  // Errors name the address and the system's reason ("cannot listen on 127.0.0.1:9400: Address
  // already in use").
  static Result<std::unique_ptr<MetricsServer>> start(
      const ListenAddress& address,
      std::chrono::milliseconds request_limit = std::chrono::milliseconds(2000));
  ~MetricsServer();  // stops the thread and closes every socket
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // What the endpoint serves, rendered when a scraper asks rather than at every sample: a
  // watch at 1 Hz is scraped every 15-60 s. Called on the server's thread, once per request,
  // one request at a time; it must own what it renders.
  using Render = std::function<std::string()>;

  // Replaces what is served from now on. Thread-safe.
  void publish(Render render);
  void publish(std::string metrics);  // a fixed text
  // The port bound (the one chosen when 0 was asked).
  uint16_t port() const { return port_; }
  // "http://127.0.0.1:9400/metrics".
  std::string url() const;
  // Connections accepted and not yet closed, at most kMaxClients. Thread-safe. A connection is
  // counted out before its socket is closed, so a client that has read its answer to the end
  // (or seen the server close) finds it gone from this count.
  size_t open_clients() const { return open_clients_.load(); }

 private:
  MetricsServer() = default;
  void serve();
  std::string reply_to(std::string_view head);

  int listen_fd_ = -1;
  int wake_read_ = -1;
  int wake_write_ = -1;
  uint16_t port_ = 0;
  std::chrono::milliseconds request_limit_{2000};
  std::string host_;
  std::mutex mutex_;
  Render render_;
  std::atomic<size_t> open_clients_{0};
  std::thread thread_;
};

}  // namespace sparkdoc::watch
