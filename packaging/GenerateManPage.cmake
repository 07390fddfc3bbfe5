# cmake -DHELP2MAN=... -DBINARY=... -DNAME=... -DSUMMARY=... -DOUTPUT=... -DVERSION=... -P GenerateManPage.cmake
# help2man on BINARY; for trainyardctl, a COMMANDS section with each
# command's own help (`trainyardctl help COMMAND`).
set(include_args)
if(NAME STREQUAL "trainyardctl")
  set(inc "[COMMANDS]\n")
  foreach(c validate submit ls show artifacts logs cancel metrics rm rename tag note archive rerun import
            queue hold priority policy daemon node pipeline cache)
    execute_process(COMMAND ${BINARY} help ${c} OUTPUT_VARIABLE h RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${BINARY} help ${c} failed")
    endif()
    string(REPLACE "\\" "\\\\" h "${h}")
    set(inc "${inc}.SS ${c}\n.nf\n${h}.fi\n")
  endforeach()
  file(WRITE ${OUTPUT}.h2m "${inc}")
  set(include_args --include ${OUTPUT}.h2m)
endif()
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --name "${SUMMARY}" --version-string "${NAME} ${VERSION}" ${include_args}
                        --output ${OUTPUT} ${BINARY}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man ${BINARY} failed (${rc})")
endif()
