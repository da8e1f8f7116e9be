#pragma once
// The error model, after LAPACK: an invalid argument (LAPACK's negative info) throws
// std::invalid_argument naming the routine and the argument; numerical breakdown is
// reported through a positive info return value, never by an exception.
#include <sstream>
#include <stdexcept>
#include <string>

namespace basalt {

class InvalidArgument : public std::invalid_argument {
 public:
  InvalidArgument(const std::string& routine, const std::string& argument, const std::string& why)
      : std::invalid_argument("basalt::" + routine + ": invalid argument '" + argument +
                              "': " + why),
        argument_(argument) {}
  const std::string& argument() const noexcept { return argument_; }

 private:
  std::string argument_;
};

// Throws InvalidArgument with the message why... ; out of line, so that require's test inlines.
template <class... Why>
[[noreturn, gnu::noinline, gnu::cold]] void reject(const char* routine, const char* argument,
                                                   const Why&... why) {
  std::ostringstream message;
  (message << ... << why);
  throw InvalidArgument(routine, argument, message.str());
}

// require(cond, "laswp", "k2", "k2 = ", k2, " exceeds the number of rows ", m). Cheap when cond
// holds (with the message built in the same function it did not inline: 100,000 calls took
// 2.5 ms); per-matrix checks of a batch still go through impl::check_each_matrix, which calls
// it only once a matrix has failed.
template <class... Why>
inline void require(bool condition, const char* routine, const char* argument, const Why&... why) {
  if (!condition) reject(routine, argument, why...);
}

}  // namespace basalt
