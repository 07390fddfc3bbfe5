# One INTERFACE target carries the language standard, warnings and Qt hygiene
# defines; every Trainyard target links it.
add_library(trainyard_options INTERFACE)
target_compile_features(trainyard_options INTERFACE cxx_std_23)
target_compile_options(trainyard_options INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
target_compile_definitions(trainyard_options INTERFACE
  QT_NO_CAST_TO_ASCII
  QT_NO_URL_CAST_FROM_STRING
  QT_NO_FOREACH
  QT_USE_QSTRINGBUILDER
  QT_DISABLE_DEPRECATED_UP_TO=0x060000)

option(TRAINYARD_WERROR "Treat warnings as errors" OFF)
if(TRAINYARD_WERROR)
  target_compile_options(trainyard_options INTERFACE -Werror)
endif()

option(TRAINYARD_SANITIZE "Build with AddressSanitizer and UBSan" OFF)
if(TRAINYARD_SANITIZE)
  target_compile_options(trainyard_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(trainyard_options INTERFACE -fsanitize=address,undefined)
endif()
