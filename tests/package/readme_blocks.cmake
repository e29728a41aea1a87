# spindle_readme_blocks(<readme> <out_dir> <names_var> <project_var>): writes every ```cpp block of
# <readme> as <out_dir>/<name>.cpp and sets <names_var> to the names (no extension), in README
# order; sets <project_var> to the text of its one ```cmake block, the game project it shows.
#
# Each block must be preceded by a comment saying how it is tested, so no block goes untested:
#   <!-- test: program -->            a whole program: compiled as it stands, must return 0.
#   <!-- test: snippet in-engine -->  statements inside a game's main(): leading #include lines go
#                                     to file scope, the rest runs after the first game's setup
#                                     (using namespace spindle; core::Engine engine; core::World&
#                                     world), then the engine steps a few frames and main returns 0.
#   <!-- test: project -->            (```cmake) the CMakeLists.txt of a game whose main.cpp is the
#                                     first program block.
# The harness only adds that context; every line of a block is compiled as written, and #line
# points compiler errors at README.md.
function(spindle_readme_blocks readme out_dir names_var project_var)
  file(READ "${readme}" text)
  set(names "")
  set(project "")
  set(index 0)
  set(consumed 0)  # characters of `text` before `rest`
  set(rest "${text}")
  while(TRUE)
    # The next ```cpp or ```cmake fence, whichever comes first.
    string(FIND "${rest}" "```cpp\n" cpp_at)
    string(FIND "${rest}" "```cmake\n" cmake_at)
    if(cpp_at EQUAL -1 AND cmake_at EQUAL -1)
      break()
    elseif(cmake_at EQUAL -1 OR (NOT cpp_at EQUAL -1 AND cpp_at LESS cmake_at))
      set(language cpp)
      set(open ${cpp_at})
    else()
      set(language cmake)
      set(open ${cmake_at})
    endif()
    math(EXPR index "${index} + 1")
    string(SUBSTRING "${rest}" 0 ${open} before)
    string(LENGTH "```${language}\n" fence_length)
    math(EXPR body_start "${open} + ${fence_length}")
    string(SUBSTRING "${rest}" ${body_start} -1 after_open)
    string(FIND "${after_open}" "\n```" close)
    if(close EQUAL -1)
      message(FATAL_ERROR "${readme}: code block ${index} is never closed")
    endif()
    math(EXPR close_with_newline "${close} + 1")
    string(SUBSTRING "${after_open}" 0 ${close_with_newline} body)

    # The first line of the body, counted from 1, for #line and for messages.
    string(SUBSTRING "${text}" 0 ${consumed} done_text)
    string(REGEX MATCHALL "\n" newlines "${done_text}${before}")
    list(LENGTH newlines line)
    math(EXPR line "${line} + 2")

    # The annotation: the last HTML comment before the fence, with only blank space after it.
    string(FIND "${before}" "<!--" comment_at REVERSE)
    set(kind "")
    if(NOT comment_at EQUAL -1)
      string(SUBSTRING "${before}" ${comment_at} -1 comment)
      if(comment MATCHES "^<!-- test: ([a-z -]+[a-z]) -->[ \n]*$")
        set(kind "${CMAKE_MATCH_1}")
      endif()
    endif()

    if(language STREQUAL "cpp" AND kind STREQUAL "program")
      set(name "readme_${index}_program")
      file(WRITE "${out_dir}/${name}.cpp" "#line ${line} \"${readme}\"\n${body}")
      list(APPEND names "${name}")
    elseif(language STREQUAL "cpp" AND kind STREQUAL "snippet in-engine")
      set(name "readme_${index}_snippet")
      set(includes "")
      set(statements "${body}")
      set(statements_line ${line})
      while(statements MATCHES "^(#include[^\n]*\n)")
        string(APPEND includes "${CMAKE_MATCH_1}")
        string(LENGTH "${CMAKE_MATCH_1}" include_length)
        string(SUBSTRING "${statements}" ${include_length} -1 statements)
        math(EXPR statements_line "${statements_line} + 1")
      endwhile()
      file(WRITE "${out_dir}/${name}.cpp"
           "// Generated from ${readme}, line ${line}: a snippet inside a game's main().\n"
           "#include <spindle/spindle.h>\n"
           "#line ${line} \"${readme}\"\n"
           "${includes}"
           "using namespace spindle;\n"
           "int main() {\n"
           "  core::Engine engine;\n"
           "  core::World& world = engine.world();\n"
           "#line ${statements_line} \"${readme}\"\n"
           "${statements}"
           "  for (int frame = 0; frame < 10; ++frame) engine.step();\n"
           "  return 0;\n"
           "}\n")
      list(APPEND names "${name}")
    elseif(language STREQUAL "cmake" AND kind STREQUAL "project")
      if(NOT project STREQUAL "")
        message(FATAL_ERROR "${readme}:${line}: a second '<!-- test: project -->' block")
      endif()
      set(project "${body}")
    else()
      message(FATAL_ERROR "${readme}:${line}: ```${language} block ${index} has no '<!-- test: "
                          "program -->', '<!-- test: snippet in-engine -->' or '<!-- test: "
                          "project -->' (```cmake) comment just before it")
    endif()

    math(EXPR skip "${body_start} + ${close} + 4")
    math(EXPR consumed "${consumed} + ${skip}")
    string(SUBSTRING "${rest}" ${skip} -1 rest)
  endwhile()
  if(names STREQUAL "" OR project STREQUAL "")
    message(FATAL_ERROR "${readme} has no ```cpp program or no ```cmake project block")
  endif()
  set(${names_var} "${names}" PARENT_SCOPE)
  set(${project_var} "${project}" PARENT_SCOPE)
endfunction()
