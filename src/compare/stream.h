// Reading the snapshots of many nodes for `sparkdoc compare`, from the ways people collect
// them: a file or a folder of *.json per node, or one stream of them, which is untrusted bytes
// from many machines at once.
//
//   pdsh -w node[1-2] sparkdoc snapshot -o -    "node1: {" ... every line labelled "HOST: ";
//                                               clush labels the same way; lines of two nodes
//                                               interleave
//   srun --label sparkdoc snapshot -o -         "0: {" ... labelled with the task number,
//                                               padded with spaces to one width
//   srun / for h in ...; do ssh $h ...; done    documents one after another, unlabelled
//
// Lines are gathered per label, then each label's text is cut into JSON documents. A node that
// printed an error instead of JSON, a document cut short, a line of garbage: each is a problem
// that names the node (its label, else where it was read) and never stops the others. No input
// crashes or hangs it: documents are found by one pass over the bytes that tracks strings and
// nesting (at most kMaxDepth deep) before any parser sees them, and a document that
// `sparkdoc snapshot` could not have written (a "{" at the start of a line inside another
// document, a line break inside a string) ends the broken one where the next one starts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "compare/nodes.h"

namespace sparkdoc::compare {

inline constexpr size_t kMaxDepth = 128;  // a snapshot nests about 8 deep

// One JSON document cut from a stream.
struct Document {
  std::string label;  // the "node1: " or "0: " prefix, without ": "; "" when unlabelled
  std::string text;
  size_t line = 0;  // where it starts in its label's lines, from 1
  bool operator==(const Document&) const = default;
};

struct Problem {
  std::string node;      // the label or the origin ("-", a file name) and the line
  std::string message;   // "printed no snapshot: bash: sparkdoc: command not found"
  bool skipped = false;  // a node (or what should have been one) was left out
  bool operator==(const Problem&) const = default;
};

struct Documents {
  std::vector<Document> documents;
  std::vector<Problem> problems;
  bool operator==(const Documents&) const = default;
};

// Cuts a stream into documents per label. `origin` names the stream in problems ("-", a
// file name).
Documents split_stream(std::string_view bytes, std::string_view origin);

// One input: a file's contents or standard input's, and what to call it.
struct Input {
  std::string origin;     // "-" for standard input, else the path given
  std::string file_name;  // the name without its folder; "" for standard input
  std::string bytes;
};

struct NodeSet {
  std::vector<Node> nodes;
  std::vector<Problem> problems;
};

// Every snapshot in the inputs, named by its label when it has one, else by its hostname, else
// by its file name (else "-#N" for the Nth document on standard input); a name taken twice is
// made unique with "#2", "#3". Documents that are not snapshots are problems, skipped.
NodeSet read_nodes(const std::vector<Input>& inputs);

}  // namespace sparkdoc::compare
