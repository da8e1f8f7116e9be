# Kokkos and Kokkos Kernels: the user's, when Kokkos_ROOT / KokkosKernels_ROOT (or CMAKE_PREFIX_PATH)
# name them; otherwise the cached build of scripts/bootstrap.sh for the chosen backend, made now
# if missing.
if(BASALT_ENABLE_CUDA)
  set(basalt_backend cuda)
else()
  set(basalt_backend host)
endif()

if(NOT Kokkos_ROOT AND NOT DEFINED ENV{Kokkos_ROOT} AND NOT Kokkos_DIR)
  message(STATUS "Basalt: finding or building the ${basalt_backend} dependencies (scripts/bootstrap.sh)")
  execute_process(COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/bootstrap.sh ${basalt_backend}
                  OUTPUT_VARIABLE basalt_deps_prefix RESULT_VARIABLE basalt_bootstrap_result
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT basalt_bootstrap_result EQUAL 0)
    message(FATAL_ERROR "Basalt: scripts/bootstrap.sh ${basalt_backend} failed")
  endif()
  set(Kokkos_ROOT ${basalt_deps_prefix})
  set(KokkosKernels_ROOT ${basalt_deps_prefix})
  message(STATUS "Basalt: dependencies in ${basalt_deps_prefix}")
endif()

find_package(Kokkos REQUIRED)
find_package(KokkosKernels REQUIRED)

if(BASALT_ENABLE_CUDA)
  kokkos_check(DEVICES CUDA)
elseif(Kokkos_DEVICES MATCHES "CUDA")
  message(FATAL_ERROR "Basalt: this Kokkos has the CUDA backend; configure with -DBASALT_ENABLE_CUDA=ON")
endif()
