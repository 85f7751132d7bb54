// A small HTTP client for the endpoint tests: connect to 127.0.0.1:port, send, read to the end.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace sparkdoc::watch {

// A connected socket, or -1. A `receive_buffer_bytes` above 0 is set before connecting, so that
// the window the server sees is that small (a client slow to read).
inline int connect_loopback(uint16_t port, int receive_buffer_bytes = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer_bytes > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof receive_buffer_bytes);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `text`; false when the server has gone.
inline bool send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Everything the server sends until it closes (or resets) the connection.
inline std::string read_to_end(int fd) {
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
    reply.append(buffer, static_cast<size_t>(n));
  }
  return reply;
}

// Sends `request` and returns everything the server answers, or "connect failed".
inline std::string exchange(uint16_t port, const std::string& request) {
  int fd = connect_loopback(port);
  if (fd < 0) return "connect failed";
  send_all(fd, request);
  std::string reply = read_to_end(fd);
  ::close(fd);
  return reply;
}

}  // namespace sparkdoc::watch
