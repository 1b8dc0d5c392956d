# `lathe view`'s page with its Content-Security-Policy completed: the policy
# names the page's one inline script and one style sheet by their SHA-256
# (base64), so it allows exactly those and no other inline code (an element
# or handler injected through a name from a file would not run).
#   cmake -DIN=src/lathe/view/view.html -DOUT=page.html -P view_page.cmake
# The script and the style sheet are the elements opened by a bare <script>
# and <style> tag (the model's script has attributes); the hash is of the
# text between that tag and its closing tag, as the browser hashes it.

# The text of the element opened by `open_tag`, from the page in `page_var`.
function(element_text page_var open_tag close_tag out)
  string(FIND "${${page_var}}" "${open_tag}" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "${IN}: no ${open_tag}")
  endif()
  string(LENGTH "${open_tag}" tag_length)
  math(EXPR start "${start} + ${tag_length}")
  string(SUBSTRING "${${page_var}}" ${start} -1 rest)
  string(FIND "${rest}" "${close_tag}" length)
  string(SUBSTRING "${rest}" 0 ${length} text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Base64 of the bytes a hex string spells (CMake hashes to hex only).
function(hex_to_base64 hex out)
  set(alphabet "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  string(LENGTH "${hex}" hex_length)
  set(result "")
  set(i 0)
  while(i LESS hex_length)
    string(SUBSTRING "${hex}" ${i} 6 group)  # 3 bytes, fewer at the end
    string(LENGTH "${group}" group_length)
    string(SUBSTRING "${group}000000" 0 6 padded)
    math(EXPR bits "0x${padded}")
    set(chars "")
    foreach(shift 18 12 6 0)
      math(EXPR index "(${bits} >> ${shift}) & 63")
      string(SUBSTRING "${alphabet}" ${index} 1 c)
      string(APPEND chars "${c}")
    endforeach()
    if(group_length EQUAL 2)
      string(SUBSTRING "${chars}" 0 2 chars)
      string(APPEND chars "==")
    elseif(group_length EQUAL 4)
      string(SUBSTRING "${chars}" 0 3 chars)
      string(APPEND chars "=")
    endif()
    string(APPEND result "${chars}")
    math(EXPR i "${i} + 6")
  endwhile()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(element_hash page_var open_tag close_tag out)
  element_text(${page_var} "${open_tag}" "${close_tag}" text)
  string(SHA256 hex "${text}")
  hex_to_base64(${hex} b64)
  set(${out} "${b64}" PARENT_SCOPE)
endfunction()

file(READ "${IN}" page)
element_hash(page "<script>" "</script>" script_hash)
element_hash(page "<style>" "</style>" style_hash)
string(REPLACE "__LATHE_SCRIPT_SHA256__" "${script_hash}" page "${page}")
string(REPLACE "__LATHE_STYLE_SHA256__" "${style_hash}" page "${page}")
file(WRITE "${OUT}.tmp" "${page}")
file(RENAME "${OUT}.tmp" "${OUT}")
