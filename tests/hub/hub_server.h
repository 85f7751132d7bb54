// A small HTTP/1.1 server for the Hub fetcher's tests, on 127.0.0.1 at a port the kernel picks:
// one thread accepts, one thread serves each connection (keep-alive, as libcurl reuses them).
// It serves a Hub-shaped tree from a folder,
//   GET /ORG/NAME/resolve/REV/FILE   ->   ROOT/ORG/NAME/REV/FILE
// with real Range support (206 and Content-Range, 416 past the end), *.safetensors sent on by a
// 302 to /cdn/ORG/NAME/REV/FILE the way the Hub sends large files to its CDN (optionally to
// another host name, "localhost", so that a redirect leaves the endpoint's host), the Hub's
// answers for what is missing (401 RepoNotFound, 404 RevisionNotFound, 404 EntryNotFound), and
// whatever a test's handler answers first: canned statuses, lies and endless bodies. It counts
// the requests and the bytes it sent and records each request. Test harness only.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sparkdoc::testing {

struct HttpRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A piece of a file sent as a reply's body, read as it is sent.
struct FilePart {
  std::filesystem::path path;
  uint64_t first = 0;
  uint64_t count = 0;
};

struct HttpReply {
  enum class Kind {
    kNormal,   // status, headers, body, Content-Length computed
    kRaw,      // `raw` sent as it is, then the connection closed (lies about lengths)
    kEndless,  // status and headers, then a body without end until the client goes
    kStall,    // nothing at all until the client goes
  };
  Kind kind = Kind::kNormal;
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<FilePart> file;  // the body instead of `body` (kNormal)
  std::string raw;
};

// A canned reply of `status` with `headers` and a short body.
HttpReply reply(int status, std::vector<std::pair<std::string, std::string>> headers = {},
                std::string body = "");

class HubServer {
 public:
  // The commit every resolve answer names in X-Repo-Commit.
  static constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

  explicit HubServer(std::filesystem::path root);
  HubServer(const HubServer&) = delete;
  HubServer& operator=(const HubServer&) = delete;
  ~HubServer();

  // "http://127.0.0.1:PORT".
  std::string endpoint() const;
  uint16_t port() const { return port_; }

  // Answers a request before the tree does when it returns a reply.
  using Handler = std::function<std::optional<HttpReply>(const HttpRequest&)>;
  void set_handler(Handler handler);
  // Answer Range requests with the whole file (200), as a server without Range support does.
  void set_ignore_range(bool ignore) { ignore_range_ = ignore; }
  // The host name the CDN redirect names: "" for a relative Location (this host).
  void set_redirect_host(std::string host);

  uint64_t requests() const { return requests_; }
  uint64_t bytes_sent() const { return bytes_sent_; }  // status lines, headers and bodies
  std::vector<HttpRequest> log() const;
  void reset_counts();

 private:
  void accept_loop();
  void serve(int fd);
  HttpReply answer(const HttpRequest& request);
  HttpReply from_tree(const HttpRequest& request);
  bool send_all(int fd, std::string_view bytes);
  bool send_file(int fd, const std::filesystem::path& path, uint64_t first, uint64_t count);

  std::filesystem::path root_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> ignore_range_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  mutable std::mutex mutex_;  // guards what follows
  Handler handler_;
  std::string redirect_host_;
  std::vector<HttpRequest> log_;
  std::vector<int> connections_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

}  // namespace sparkdoc::testing
