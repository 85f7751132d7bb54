#include "watch/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

namespace sparkdoc::watch {
namespace {

constexpr size_t kMaxHead = 8192;
using Clock = std::chrono::steady_clock;

// An accept that fails for want of descriptors or memory leaves the connection queued and the
// listening socket readable; it is left out of the poll this long instead of retried in a spin.
constexpr std::chrono::milliseconds kAcceptPause{100};

// One open connection: its head as it arrives, then its answer as the client takes it.
struct Client {
  int fd = -1;
  Clock::time_point deadline;
  std::string head;
  bool answering = false;
  std::string reply;
  size_t sent = 0;
  bool done = false;  // to be closed: answered, gone, failed or out of time
};

enum class Progress { kWaiting, kDone, kGone };

// Reads what has arrived, kMaxHead bytes at most in all. kDone once the head is complete: its
// blank line, kMaxHead bytes, or the client's end of sending after some bytes (`printf ... | nc`);
// kGone when the client left without a byte or the socket failed.
Progress read_head(Client& client) {
  char buffer[1024];
  for (;;) {
    size_t room = std::min(sizeof buffer, kMaxHead - client.head.size());
    ssize_t n = ::recv(client.fd, buffer, room, 0);
    if (n > 0) {
      // The blank line may straddle two reads: look from the three bytes before this one.
      size_t from = client.head.size() < 3 ? 0 : client.head.size() - 3;
      client.head.append(buffer, static_cast<size_t>(n));
      if (client.head.size() >= kMaxHead ||
          client.head.find("\r\n\r\n", from) != std::string::npos ||
          client.head.find("\n\n", from) != std::string::npos) {
        return Progress::kDone;
      }
    } else if (n == 0) {
      return client.head.empty() ? Progress::kGone : Progress::kDone;
    } else if (errno != EINTR) {
      return errno == EAGAIN || errno == EWOULDBLOCK ? Progress::kWaiting : Progress::kGone;
    }
  }
}

// Sends what the socket takes now. kDone once all is sent, kWaiting while the client's side is
// full (a slow reader), kGone when the client left.
Progress send_reply(Client& client) {
  while (client.sent < client.reply.size()) {
    ssize_t n = ::send(client.fd, client.reply.data() + client.sent,
                       client.reply.size() - client.sent, MSG_NOSIGNAL);
    if (n > 0) {
      client.sent += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Progress::kWaiting
                                                                : Progress::kGone;
    }
  }
  return Progress::kDone;
}

// The poll timeout until `until`, rounded up so that poll does not wake just before a deadline
// and spin; -1 (none) for time_point::max().
int timeout_ms(Clock::time_point now, Clock::time_point until) {
  if (until == Clock::time_point::max()) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, std::numeric_limits<int>::max()));
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
    // Non-blocking: a connection reset between poll and accept must not stall the loop.
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // A queue as long as the cap: a burst beyond it waits to be accepted instead of having its
    // SYNs dropped, which a client retries only after 1 s.
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::listen(fd, static_cast<int>(kMaxClients)) != 0) {
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
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  Clock::time_point accept_after{};
  for (;;) {
    Clock::time_point now = Clock::now();
    // At the cap the listening socket is left out of the poll, and newer connections wait in the
    // listen queue until a slot frees, which every slot does within request_limit: a scrape
    // behind 64 stalled clients is answered within about 2 s, inside Prometheus' 10 s scrape
    // timeout. Accepting and closing at once would instead refuse every scrape for as long as
    // someone keeps 64 connections open.
    const bool room = clients.size() < kMaxClients;
    const bool accepting = room && now >= accept_after;
    fds.assign({{wake_read_, POLLIN, 0}, {accepting ? listen_fd_ : -1, POLLIN, 0}});
    Clock::time_point wake_at = room && !accepting ? accept_after : Clock::time_point::max();
    for (const Client& client : clients) {
      fds.push_back({client.fd, static_cast<short>(client.answering ? POLLOUT : POLLIN), 0});
      wake_at = std::min(wake_at, client.deadline);
    }
    if (::poll(fds.data(), fds.size(), timeout_ms(now, wake_at)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    now = Clock::now();
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& client = clients[i];
      Progress progress = Progress::kWaiting;
      if (fds[i + 2].revents != 0) {
        progress = client.answering ? send_reply(client) : read_head(client);
        if (!client.answering && progress == Progress::kDone) {
          client.reply = reply_to(client.head);
          client.answering = true;
          progress = send_reply(client);
        }
      }
      client.done = progress != Progress::kWaiting || now >= client.deadline;
    }
    auto gone = std::partition(clients.begin(), clients.end(),
                               [](const Client& client) { return !client.done; });
    open_clients_ = static_cast<size_t>(gone - clients.begin());  // before the close: see .h
    for (auto it = gone; it != clients.end(); ++it) ::close(it->fd);
    clients.erase(gone, clients.end());
    if (accepting && (fds[1].revents & POLLIN) != 0) {
      while (clients.size() < kMaxClients) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
          clients.push_back(Client{.fd = fd, .deadline = Clock::now() + request_limit_});
          continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) accept_after = Clock::now() + kAcceptPause;
        break;
      }
      open_clients_ = clients.size();
    }
  }
  open_clients_ = 0;
  for (const Client& client : clients) ::close(client.fd);
}

std::string MetricsServer::reply_to(std::string_view head) {
  Render render;
  {
    std::lock_guard lock(mutex_);
    render = render_;
  }
  const std::string metrics = render ? render() : std::string();
  return http_response(parse_request_line(head), metrics);
}

}  // namespace sparkdoc::watch
