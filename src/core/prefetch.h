// Lookups of many paths at once, so that what follows finds their inodes in the kernel's
// caches. After a reboot each lookup of a path is a read of its folder's blocks and of its
// inode; made one after another they wait on the disk one at a time, and made from several
// threads the disk serves them together.
#pragma once

#include <string>
#include <vector>

namespace sparkdoc {

// lstat()s every path on up to `threads` threads (this one among them) and discards the
// results: a path that is missing or unreadable costs its failed lookup, nothing more. The
// workers allocate nothing.
void prefetch_lookups(const std::vector<std::string>& paths, unsigned threads);

}  // namespace sparkdoc
