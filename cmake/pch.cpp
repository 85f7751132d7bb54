// The translation unit that builds the libraries' precompiled header (cmake/library_pch.cmake).
