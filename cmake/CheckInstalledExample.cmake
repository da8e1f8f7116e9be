# Installs the Basalt build in BUILD to a scratch prefix, builds examples/permute_rows against
# it as a user would, and runs it. Called by CTest (cmake -P) with SOURCE and BUILD set.
set(scratch ${BUILD}/installed-example)
file(REMOVE_RECURSE ${scratch})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${scratch}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE}/examples/permute_rows -B ${scratch}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DBasalt_ROOT=${scratch}/prefix)
run(${CMAKE_COMMAND} --build ${scratch}/build)
run(${scratch}/build/permute_rows)
