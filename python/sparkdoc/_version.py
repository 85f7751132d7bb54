"""The package's version. It must equal the CMake project's VERSION (CMakeLists.txt), which is
what the bundled libsparkdoc.so reports: a test holds the two together, and the library is
refused when they differ."""

__version__ = "0.1.0"
