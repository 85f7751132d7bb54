#include "hub_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

namespace sparkdoc::testing {
namespace {

namespace fs = std::filesystem;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 206:
      return "Partial Content";
    case 302:
      return "Found";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    default:
      return "Status";
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return std::string(s);
}

std::optional<HttpRequest> parse_request(const std::string& head) {
  std::istringstream in(head);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream first(line);
  HttpRequest r;
  std::string version;
  if (!(first >> r.method >> r.path >> version)) return std::nullopt;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    r.headers[lower(line.substr(0, colon))] = trimmed(std::string_view(line).substr(colon + 1));
  }
  return r;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '/')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string head_of(const HttpReply& r, uint64_t content_length) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
  head += "Content-Length: " + std::to_string(content_length) + "\r\n\r\n";
  return head;
}

}  // namespace

HttpReply reply(int status, std::vector<std::pair<std::string, std::string>> headers,
                std::string body) {
  HttpReply r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

HubServer::HubServer(fs::path root) : root_(std::move(root)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(listen_fd_, 64);
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

HubServer::~HubServer() {
  stopping_ = true;
  // shutdown wakes the accept and every recv or send blocked on a connection.
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
  ::close(listen_fd_);
}

std::string HubServer::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void HubServer::set_handler(Handler handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  handler_ = std::move(handler);
}

void HubServer::set_redirect_host(std::string host) {
  std::lock_guard<std::mutex> lock(mutex_);
  redirect_host_ = std::move(host);
}

std::vector<HttpRequest> HubServer::log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

void HubServer::reset_counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_ = 0;
  bytes_sent_ = 0;
  log_.clear();
}

void HubServer::accept_loop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    // Each reply goes out as it is written, as a real server's does: Nagle's wait for the
    // client's delayed ACK would add 40 ms to every request.
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    connections_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

bool HubServer::send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes_sent_ += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool HubServer::send_file(int fd, const fs::path& path, uint64_t first, uint64_t count) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(first));
  std::vector<char> buffer(64 * 1024);
  while (count > 0) {
    auto want = static_cast<std::streamsize>(std::min<uint64_t>(count, buffer.size()));
    in.read(buffer.data(), want);
    if (in.gcount() != want) return false;
    if (!send_all(fd, std::string_view(buffer.data(), static_cast<size_t>(want)))) return false;
    count -= static_cast<uint64_t>(want);
  }
  return true;
}

void HubServer::serve(int fd) {
  std::string pending;
  char buffer[4096];
  while (!stopping_) {
    // Not a request at all (a TLS handshake, say): an HTTP error, as a plain server answers.
    if (!pending.empty() && (pending[0] < 'A' || pending[0] > 'Z')) {
      send_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
      break;
    }
    size_t end = pending.find("\r\n\r\n");
    if (end == std::string::npos) {
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0 || pending.size() > 64 * 1024) break;
      pending.append(buffer, static_cast<size_t>(n));
      continue;
    }
    auto request = parse_request(pending.substr(0, end));
    pending.erase(0, end + 4);
    if (!request) break;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      log_.push_back(*request);
    }
    ++requests_;
    HttpReply r = answer(*request);
    if (r.kind == HttpReply::Kind::kRaw) {
      send_all(fd, r.raw);
      break;
    }
    if (r.kind == HttpReply::Kind::kStall) {
      while (!stopping_ && ::recv(fd, buffer, sizeof buffer, 0) > 0) {
      }
      break;
    }
    if (r.kind == HttpReply::Kind::kEndless) {
      std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
      for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
      head += "Connection: close\r\n\r\n";
      std::string chunk(64 * 1024, '{');
      if (send_all(fd, head)) {
        while (!stopping_ && send_all(fd, chunk)) {
        }
      }
      break;
    }
    // A file body is sent from the file, in pieces: the fetcher may stop reading at any byte.
    if (r.file) {
      if (!send_all(fd, head_of(r, r.file->count)) ||
          !send_file(fd, r.file->path, r.file->first, r.file->count)) {
        break;
      }
      continue;
    }
    if (!send_all(fd, head_of(r, r.body.size()) + r.body)) break;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase(connections_, fd);
  }
  ::close(fd);
}

HttpReply HubServer::answer(const HttpRequest& request) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    handler = handler_;
  }
  if (handler) {
    if (auto r = handler(request)) return *r;
  }
  return from_tree(request);
}

HttpReply HubServer::from_tree(const HttpRequest& request) {
  auto parts = segments(request.path);
  const bool resolve = parts.size() == 5 && parts[2] == "resolve";
  const bool cdn = parts.size() == 5 && parts[0] == "cdn";
  if (!resolve && !cdn) return reply(404, {{"X-Error-Code", "EntryNotFound"}});
  const std::string org = cdn ? parts[1] : parts[0];
  const std::string name = cdn ? parts[2] : parts[1];
  const std::string rev = parts[3];
  const std::string file = parts[4];
  std::vector<std::pair<std::string, std::string>> headers;
  if (resolve) headers.emplace_back("X-Repo-Commit", kCommit);
  if (!fs::is_directory(root_ / org / name)) {
    headers.emplace_back("X-Error-Code", "RepoNotFound");
    return reply(401, headers, "Repository Not Found");
  }
  if (!fs::is_directory(root_ / org / name / rev)) {
    headers.emplace_back("X-Error-Code", "RevisionNotFound");
    return reply(404, headers, "Revision Not Found");
  }
  const fs::path path = root_ / org / name / rev / file;
  if (!fs::is_regular_file(path)) {
    headers.emplace_back("X-Error-Code", "EntryNotFound");
    return reply(404, headers, "Entry not found");
  }
  if (resolve && file.ends_with(".safetensors")) {
    std::string host;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      host = redirect_host_;
    }
    std::string location = "/cdn/" + org + "/" + name + "/" + rev + "/" + file;
    if (!host.empty()) location = "http://" + host + ":" + std::to_string(port_) + location;
    headers.emplace_back("Location", location);
    return reply(302, headers);
  }
  const uint64_t size = fs::file_size(path);
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  int status = 200;
  std::string range = request.header("range");
  if (!range.empty() && !ignore_range_ && range.starts_with("bytes=")) {
    std::string spec = range.substr(6);
    auto dash = spec.find('-');
    first = std::stoull(spec.substr(0, dash));
    if (dash + 1 < spec.size()) last = std::min<uint64_t>(std::stoull(spec.substr(dash + 1)), last);
    if (first >= size || first > last) {
      headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      return reply(416, headers);
    }
    status = 206;
    headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                              std::to_string(last) + "/" + std::to_string(size));
  }
  headers.emplace_back("Accept-Ranges", "bytes");
  HttpReply r = reply(status, headers);
  r.file = FilePart{path, first, size == 0 ? 0 : last - first + 1};
  return r;
}

}  // namespace sparkdoc::testing
