#include "watch/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace sparkdoc::watch {
namespace {

constexpr size_t kMaxHead = 8192;

int milliseconds_left(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool ready(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, milliseconds_left(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const ListenAddress& address, std::chrono::milliseconds request_limit) {
  std::string shown = fmt::format("{}:{}", address.host.empty() ? "*" : address.host, address.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  int rc = ::getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(), port.c_str(),
                         &hints, &found);
  if (rc != 0) return fail(fmt::format("cannot listen on {}: {}", shown, gai_strerror(rc)));
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->request_limit_ = request_limit;
  std::string last_error = "no address to bind";
  for (addrinfo* ai = found; ai != nullptr && server->listen_fd_ < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      last_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    server->listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (server->listen_fd_ < 0) {
    return fail(fmt::format("cannot listen on {}: {}", shown, last_error));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(server->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    if (bound.ss_family == AF_INET) {
      server->port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else if (bound.ss_family == AF_INET6) {
      server->port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    }
  }
  server->host_ = address.host;
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  server->wake_read_ = wake[0];
  server->wake_write_ = wake[1];
  server->thread_ = std::thread([s = server.get()] { s->serve(); });
  return server;
}

MetricsServer::~MetricsServer() {
  if (thread_.joinable()) {
    char byte = 1;
    while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  for (int fd : {listen_fd_, wake_read_, wake_write_}) {
    if (fd >= 0) ::close(fd);
  }
}

void MetricsServer::publish(Render render) {
  std::lock_guard lock(mutex_);
  render_ = std::move(render);
}

void MetricsServer::publish(std::string metrics) {
  publish([text = std::move(metrics)] { return text; });
}

std::string MetricsServer::url() const {
  std::string host = host_.empty() ? "127.0.0.1" : host_;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("http://{}:{}/metrics", host, port_);
}

void MetricsServer::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    answer(client);
    ::close(client);
  }
}

void MetricsServer::answer(int client) {
  auto deadline = std::chrono::steady_clock::now() + request_limit_;
  std::string head;
  char buffer[1024];
  while (head.size() < kMaxHead && head.find("\r\n\r\n") == std::string::npos &&
         head.find("\n\n") == std::string::npos) {
    if (!ready(client, POLLIN, deadline)) return;
    ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    head.append(buffer, static_cast<size_t>(n));
  }
  Render render;
  {
    std::lock_guard lock(mutex_);
    render = render_;
  }
  const std::string metrics = render ? render() : std::string();
  std::string reply = http_response(parse_request_line(head), metrics);
  size_t sent = 0;
  while (sent < reply.size()) {
    if (!ready(client, POLLOUT, deadline)) return;
    ssize_t n = ::send(client, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace sparkdoc::watch
