// The invitation link's Copy button.
document.getElementById("copy-link").addEventListener("click", (event) => {
  const field = document.getElementById("invitation-link");
  field.select();
  if (navigator.clipboard) {
    navigator.clipboard.writeText(field.value);
  }
  event.currentTarget.textContent = "Copied";
});
