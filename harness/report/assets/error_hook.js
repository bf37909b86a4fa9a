
window.__reportErrors = [];
window.onerror = function (message, source, line) {
  window.__reportErrors.push(String(message) + " (line " + line + ")");
  var box = document.getElementById("errors");
  if (box) { box.hidden = false; box.textContent = window.__reportErrors.join("\n"); }
  return false;
};
